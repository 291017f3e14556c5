import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@switchyard/config';
import { TASK_STATUSES, type TaskStatus } from '@switchyard/contracts';
import { MetricsRegistry, type Logger } from '@switchyard/observability';
import { APP_CONFIG, LOGGER } from '@switchyard/platform';
import { JobStatsRepository } from '@switchyard/state';

/** How long a job count is served before /metrics reads it again. */
export const JOB_COUNTS_TTL_MS = 5_000;

/**
 * `switchyard_jobs{status}`: jobs per status from one grouped count, cached a few seconds so
 * frequent scrapes (or several scrapers) cost one query per TTL. When Postgres does not
 * answer, the last counts stay and `switchyard_job_counts_age_seconds` grows.
 */
@Injectable()
export class JobStatusMetrics {
  private counts: Record<TaskStatus, number> | undefined;
  private runningByTenant = new Map<string, number>();
  private staleTasks: number | undefined;
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<void> | undefined;
  now: () => number = Date.now;

  constructor(
    @Inject(MetricsRegistry) registry: MetricsRegistry,
    @Inject(JobStatsRepository) private readonly jobStats: JobStatsRepository,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'STALE_AFTER_MS'>,
  ) {
    registry.collected('switchyard_jobs', `Jobs by status (read at most every ${JOB_COUNTS_TTL_MS / 1000} s).`, 'gauge', () =>
      this.counts ? TASK_STATUSES.map((status) => [{ status }, this.counts![status] ?? 0] as const) : [],
      ['status'],
    );
    registry.collected(
      'switchyard_running_jobs',
      'Running jobs (pending, running or paused) per tenant, read with the job counts.',
      'gauge',
      () => [...this.runningByTenant].map(([tenant, n]) => [{ tenant }, n] as const),
      ['tenant'],
    );
    registry.collected('switchyard_tasks_stale', 'Running tasks without a heartbeat for STALE_AFTER_MS, read with the job counts.', 'gauge', () =>
      this.staleTasks === undefined ? [] : [[{}, this.staleTasks]],
    );
    registry.collected('switchyard_job_counts_age_seconds', 'Age of the job counts shown.', 'gauge', () =>
      this.counts ? [[{}, Math.max(0, (this.now() - this.fetchedAt) / 1000)]] : [],
    );
  }

  /** Reads the counts again if they are older than the TTL; never rejects. */
  async refreshIfStale(): Promise<void> {
    if (this.now() - this.fetchedAt < JOB_COUNTS_TTL_MS) return;
    this.refreshing ??= Promise.all([
      this.jobStats.countJobsByStatus(),
      this.jobStats.countRunningJobsByTenant(),
      this.jobStats.countStaleTasks(this.config.STALE_AFTER_MS),
    ])
      .then(
        ([counts, runningByTenant, staleTasks]) => {
          this.counts = counts;
          this.runningByTenant = runningByTenant;
          this.staleTasks = staleTasks;
          this.fetchedAt = this.now();
        },
        (error: unknown) => this.logger.warn({ err: error }, 'metrics: job counts could not be read; serving the last ones'),
      )
      .finally(() => {
        this.refreshing = undefined;
      });
    await this.refreshing;
  }
}
