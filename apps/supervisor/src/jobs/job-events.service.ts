import type { ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@switchyard/config';
import { describeError, type Logger } from '@switchyard/observability';
import { APP_CONFIG, LOGGER } from '@switchyard/platform';
import { CoalescedPass } from '../notifications/coalesced-pass';
import { JobNotifications } from '../notifications/job-notifications';
import { JobWatches } from '../notifications/job-watches';
import { SSE_HEARTBEAT, decideJobEvent, formatSseEvent } from './job-events';
import type { JobResponse } from './job.presenter';
import { JobsService } from './jobs.service';

/**
 * `GET /v1/jobs/:id/events`: the job as server-sent events. Reads on every NOTIFY for the job
 * (the supervisor's one shared LISTEN connection; the job is watched meanwhile, since the task
 * table's trigger notifies only watched jobs) and every EVENTS_POLL_MS as a fallback; sends
 * a `job` event when something the client sees changed, `: ping` every EVENTS_HEARTBEAT_MS, and
 * an `end` event with the terminal status, then closes. A client that goes away stops it all.
 */
@Injectable()
export class JobEventsService {
  private readonly log: Logger;

  constructor(
    private readonly jobs: JobsService,
    private readonly notifications: JobNotifications,
    private readonly watches: JobWatches,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'job-events' });
  }

  /** Reads the job first (another tenant's job is a 404 before any byte is sent), then calls `open` and streams into its response. */
  async stream(tenantId: string, jobId: string, open: () => ServerResponse): Promise<void> {
    const first = await this.jobs.get(tenantId, jobId);
    const unwatch = await this.watches.watch(jobId);
    const response = open();
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    let lastKey: string | undefined;
    let nextId = 1;
    let closed = false;
    const send = (job: JobResponse): void => {
      if (closed) return;
      const decision = decideJobEvent(lastKey, job);
      if (!decision.emit) return;
      lastKey = decision.key;
      response.write(formatSseEvent(decision.event, nextId++, job));
      if (decision.event === 'end') close();
    };
    const refresh = new CoalescedPass(
      async () => send(await this.jobs.get(tenantId, jobId)),
      this.config.EVENTS_POLL_MS,
      (error) => this.log.warn({ job_id: jobId, err: describeError(error) }, 'job events: reading the job failed; next poll retries'),
    );
    const unsubscribe = this.notifications.on('job', (changed) => {
      if (changed === jobId) void refresh.request();
    });
    const heartbeat = setInterval(() => response.write(SSE_HEARTBEAT), this.config.EVENTS_HEARTBEAT_MS);
    heartbeat.unref();
    function close(): void {
      if (closed) return;
      closed = true;
      unsubscribe();
      unwatch();
      clearInterval(heartbeat);
      void refresh.stop();
      response.end();
    }
    response.on('close', close);
    send(first);
    if (closed) return;
    refresh.start();
    // A change between the first read and the watch was not notified: read once more now.
    void refresh.request();
  }
}
