import type { Counter, Histogram, MetricsRegistry } from '@switchyard/observability';
import type { AttemptEvent, CallObserver, RetryBudgetExhaustedEvent } from '../observe/call-observer';

/** The tenant label of a call no tenant made (a probe). */
export const NO_TENANT = '(none)';

/**
 * The ledger's numbers as Prometheus metrics, counted in-process from the same attempt events
 * (so /metrics needs no database read): counters of attempts, tokens and cost by target,
 * model, outcome and tenant; histograms of attempt latency and first-token time. Each process
 * counts its own calls: the supervisor the gateway's, a worker its agents'.
 */
export class UpstreamMetricsObserver implements CallObserver {
  private readonly calls: Counter;
  private readonly inputTokens: Counter;
  private readonly outputTokens: Counter;
  private readonly cost: Counter;
  private readonly errors: Counter;
  private readonly latency: Histogram;
  private readonly firstToken: Histogram;
  private readonly budgetsExhausted: Counter;

  constructor(registry: MetricsRegistry) {
    const byCall = ['target', 'target_type', 'model', 'outcome', 'tenant'];
    this.calls = registry.counter('switchyard_upstream_calls_total', 'Upstream model call attempts.', byCall);
    this.inputTokens = registry.counter('switchyard_upstream_input_tokens_total', 'Input tokens of upstream attempts.', byCall);
    this.outputTokens = registry.counter('switchyard_upstream_output_tokens_total', 'Output tokens of upstream attempts.', byCall);
    this.cost = registry.counter('switchyard_upstream_cost_usd_total', 'Cost of upstream attempts, in US dollars.', byCall);
    this.errors = registry.counter('switchyard_upstream_errors_total', 'Failed upstream attempts by error class.', ['target', 'error_class']);
    this.latency = registry.histogram('switchyard_upstream_latency_seconds', 'Wall time of upstream attempts.', ['target', 'model', 'outcome']);
    this.firstToken = registry.histogram('switchyard_upstream_first_token_seconds', 'Time from sending an upstream request to its first content token.', ['target', 'model']);
    this.budgetsExhausted = registry.counter(
      'switchyard_retry_budget_exhausted_total',
      'Retry budgets used up (a job, or a gateway call): counted once per budget, by the process whose failed attempt spent the last of it.',
      ['tenant'],
    );
  }

  onAttempt(event: AttemptEvent): void {
    const { name: target, type: targetType, model } = event.target;
    const labels = { target, target_type: targetType, model, outcome: event.outcome, tenant: event.context?.tenantId ?? NO_TENANT };
    this.calls.inc(labels);
    this.inputTokens.inc(labels, nonNegative(event.usage?.inputTokens));
    this.outputTokens.inc(labels, nonNegative(event.usage?.outputTokens));
    this.cost.inc(labels, nonNegative(event.costUsd));
    this.latency.observe({ target, model, outcome: event.outcome }, nonNegative(event.latencyMs) / 1000);
    if (event.firstTokenMs !== undefined) this.firstToken.observe({ target, model }, nonNegative(event.firstTokenMs) / 1000);
    if (event.outcome !== 'ok') {
      this.errors.inc({ target, error_class: event.errorClass ?? event.outcome });
    }
  }

  onRetryBudgetExhausted(event: RetryBudgetExhaustedEvent): void {
    this.budgetsExhausted.inc({ tenant: event.context?.tenantId ?? NO_TENANT });
  }
}

function nonNegative(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : 0;
}
