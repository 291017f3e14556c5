import type { Logger } from '@switchyard/observability';
import type { DynamicWeightsConfig } from '../config/router-config.schema';
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
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly router: Rebalanceable,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    const settings = this.router.config.config.dynamic_weights;
    // Switched off: look again in a minute, a reload may switch it on.
    const delayMs = settings.enabled ? settings.interval_s * 1000 : 60_000;
    this.timer = setTimeout(() => {
      try {
        if (this.router.config.config.dynamic_weights.enabled) this.router.rebalanceWeights();
      } catch (error) {
        this.logger.error({ err: error }, 'dynamic weights round failed');
      }
      if (this.running) this.schedule();
    }, delayMs);
    this.timer.unref();
  }
}
