import type { Counter, MetricsRegistry } from '@switchyard/observability';
import type { AttemptEvent, CallObserver } from '../observe/call-observer';

/**
 * The ledger's numbers as Prometheus counters, per target and outcome, counted in-process
 * from the same attempt events (so /metrics needs no database read). Each process counts
 * its own calls: the supervisor the gateway's, a worker its agents'.
 */
export class UpstreamMetricsObserver implements CallObserver {
  private readonly calls: Counter;
  private readonly inputTokens: Counter;
  private readonly outputTokens: Counter;
  private readonly cost: Counter;
  private readonly latency: Counter;
  private readonly errors: Counter;

  constructor(registry: MetricsRegistry) {
    const byTargetOutcome = ['target', 'outcome'];
    this.calls = registry.counter('switchyard_upstream_calls_total', 'Upstream model call attempts.', byTargetOutcome);
    this.inputTokens = registry.counter('switchyard_upstream_input_tokens_total', 'Input tokens of upstream attempts.', byTargetOutcome);
    this.outputTokens = registry.counter('switchyard_upstream_output_tokens_total', 'Output tokens of upstream attempts.', byTargetOutcome);
    this.cost = registry.counter('switchyard_upstream_cost_usd_total', 'Cost of upstream attempts, in US dollars.', byTargetOutcome);
    this.latency = registry.counter(
      'switchyard_upstream_latency_seconds_total',
      'Total wall time of upstream attempts; divide by the calls for the mean.',
      byTargetOutcome,
    );
    this.errors = registry.counter('switchyard_upstream_errors_total', 'Failed upstream attempts by error class.', ['target', 'error_class']);
  }

  onAttempt(event: AttemptEvent): void {
    const labels = { target: event.target.name, outcome: event.outcome };
    this.calls.inc(labels);
    this.inputTokens.inc(labels, nonNegative(event.usage?.inputTokens));
    this.outputTokens.inc(labels, nonNegative(event.usage?.outputTokens));
    this.cost.inc(labels, nonNegative(event.costUsd));
    this.latency.inc(labels, nonNegative(event.latencyMs) / 1000);
    if (event.outcome !== 'ok') {
      this.errors.inc({ target: event.target.name, error_class: event.errorClass ?? event.outcome });
    }
  }
}

function nonNegative(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : 0;
}
