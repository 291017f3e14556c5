import type { Logger } from '@switchyard/observability';
import type { DynamicWeightsConfig } from '../config/router-config.schema';
import { LiveInterval } from '../timing/live-interval';
import type { WeightChangeEntry } from './weight-book';

/** The router as the rebalancer sees it. */
export interface Rebalanceable {
  readonly config: { readonly config: { readonly dynamic_weights: DynamicWeightsConfig } };
  rebalanceWeights(): WeightChangeEntry[];
}

/**
 * Runs the dynamic-weights round every `dynamic_weights.interval_s` while `enabled`; both are
 * read from the live config before each wait, so a reload turns it on, off or faster from
 * the next round. The timer is unref'd; `stop()` ends it.
 */
export class WeightRebalancer {
  private readonly interval: LiveInterval;

  constructor(router: Rebalanceable, logger: Logger) {
    // Switched off: look again in a minute, a reload may switch it on.
    this.interval = new LiveInterval(
      () => (router.config.config.dynamic_weights.enabled ? router.config.config.dynamic_weights.interval_s * 1000 : 60_000),
      () => {
        if (router.config.config.dynamic_weights.enabled) router.rebalanceWeights();
      },
      (error) => logger.error({ err: error }, 'dynamic weights round failed'),
    );
  }

  start(): void {
    this.interval.start();
  }

  stop(): void {
    this.interval.stop();
  }
}
