import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@switchyard/config';
import { MetricsRegistry, type Logger } from '@switchyard/observability';
import { TaskQueues, WorkflowCatalog } from '@switchyard/orchestration';
import { APP_CONFIG, LOGGER, registerTargetMetrics, withDeadline } from '@switchyard/platform';
import { Router } from '@switchyard/router';

/** The BullMQ job states shown per role queue. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed'] as const;

/**
 * Gauges of the fleet as the supervisor sees it at scrape time: each role queue's depth by
 * state (BullMQ's own counts, bounded by REDIS_REQUEST_TIMEOUT_MS so a Redis outage cannot hold a
 * scrape: the last counts are shown), and the router's targets (breaker, health, share).
 */
@Injectable()
export class FleetMetrics {
  private lastCounts: (readonly [{ role: string; state: string }, number])[] = [];

  constructor(
    @Inject(MetricsRegistry) registry: MetricsRegistry,
    @Inject(Router) router: Router,
    @Inject(TaskQueues) private readonly queues: TaskQueues,
    @Inject(WorkflowCatalog) private readonly catalog: WorkflowCatalog,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    registry.collected('switchyard_queue_jobs', 'Jobs in each role queue by BullMQ state.', 'gauge', () => this.queueCounts(), ['role', 'state']);
    registerTargetMetrics(registry, router);
  }

  private async queueCounts(): Promise<(readonly [{ role: string; state: string }, number])[]> {
    const roles = [...new Set([...this.catalog.roles(), ...this.queues.roles()])].sort();
    try {
      const counts = await withDeadline(
        Promise.all(roles.map(async (role) => ({ role, counts: await this.queues.queue(role).getJobCounts(...QUEUE_STATES) }))),
        this.config.REDIS_REQUEST_TIMEOUT_MS,
        'reading queue counts',
      );
      this.lastCounts = counts.flatMap(({ role, counts: byState }) => QUEUE_STATES.map((state) => [{ role, state }, byState[state] ?? 0] as const));
    } catch (error) {
      this.logger.warn({ err: error }, 'metrics: queue counts could not be read; serving the last ones');
    }
    return this.lastCounts;
  }
}
