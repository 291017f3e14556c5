import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { listenDatabaseUrl, type AppConfig } from '@switchyard/config';
import { describeError, type Logger } from '@switchyard/observability';
import { APP_CONFIG, LOGGER } from '@switchyard/platform';
import { JobWatchRepository } from '@switchyard/state';

/** How long a watch row lives without renewal; renewed every third of it. */
export const JOB_WATCH_TTL_MS = 30_000;

/**
 * The jobs this supervisor's event streams watch, kept in `job_watch` so that the task table's
 * trigger notifies their changes (and nobody else's: a NOTIFY serialises commits). One row per
 * watched job however many streams watch it, renewed for all of them by one timer while any is
 * watched. A failed write is only logged: streams poll as well, so events come late, not never.
 */
@Injectable()
export class JobWatches implements OnApplicationShutdown {
  readonly watcherId = `supervisor:${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly streams = new Map<string, number>();
  private renewal: NodeJS.Timeout | undefined;
  /** Without a LISTEN connection (transaction pooler, no direct URL) a watch would only cost writes. */
  private readonly enabled: boolean;
  private readonly log: Logger;

  constructor(
    private readonly repository: JobWatchRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
  ) {
    this.enabled = listenDatabaseUrl(config) !== undefined;
    this.log = logger.child({ component: 'job-watches' });
  }

  /** Watches `jobId` until the returned release is called; resolves once the job's notifications are on (or the write failed). */
  async watch(jobId: string): Promise<() => void> {
    const count = this.streams.get(jobId) ?? 0;
    this.streams.set(jobId, count + 1);
    if (count === 0 && this.enabled) {
      this.startRenewing();
      await this.renew([jobId]);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(jobId);
    };
  }

  /** The jobs watched now, with their stream counts. */
  watched(): ReadonlyMap<string, number> {
    return this.streams;
  }

  onApplicationShutdown(): void {
    clearInterval(this.renewal);
    this.renewal = undefined;
  }

  private release(jobId: string): void {
    const count = (this.streams.get(jobId) ?? 1) - 1;
    if (count > 0) {
      this.streams.set(jobId, count);
      return;
    }
    this.streams.delete(jobId);
    if (this.streams.size === 0) this.onApplicationShutdown();
    if (!this.enabled) return;
    // Left behind on failure, the row only expires later: a few needless notifications until then.
    void this.repository.release(this.watcherId, jobId).catch((error: unknown) => this.log.warn({ job_id: jobId, err: describeError(error) }, 'could not release a job watch; it expires'));
  }

  private startRenewing(): void {
    if (this.renewal) return;
    this.renewal = setInterval(() => void this.renew([...this.streams.keys()]), JOB_WATCH_TTL_MS / 3);
    this.renewal.unref();
  }

  private async renew(jobIds: string[]): Promise<void> {
    if (jobIds.length === 0) return;
    try {
      await this.repository.renew(this.watcherId, jobIds, JOB_WATCH_TTL_MS);
    } catch (error) {
      this.log.warn({ jobs: jobIds.length, err: describeError(error) }, 'could not write job watches; event streams poll until the next renewal');
    }
  }
}
