import { MetricsRegistry, parsePrometheusText, sampleValue } from '@switchyard/observability';
import type { AttemptEvent } from '../observe/call-observer';
import { UpstreamMetricsObserver } from './upstream-metrics.observer';

const base: AttemptEvent = {
  at: new Date(0),
  target: { name: 'cloud_main', type: 'cloud', model: 'gpt' },
  rule: 'complex_reasoning',
  meta: { task_type: 'reasoning', complexity: 'high', sensitivity: 'internal', priority: 'normal', tags: [] },
  context: undefined,
  outcome: 'ok',
  usage: { inputTokens: 1000, outputTokens: 200, estimated: false },
  latencyMs: 250,
  costUsd: 0.5,
  attempt: 1,
};

describe('UpstreamMetricsObserver', () => {
  it('counts calls, tokens and cost per target, model, outcome and tenant, latency and first token as histograms, and errors per class', async () => {
    const registry = new MetricsRegistry();
    const observer = new UpstreamMetricsObserver(registry);
    const acme = { ...base, context: { tenantId: 'acme' }, firstTokenMs: 80 };
    observer.onAttempt(acme);
    observer.onAttempt(acme);
    observer.onAttempt({ ...base, outcome: 'error', errorClass: 'rate_limited', status: 429, usage: undefined, costUsd: 0, latencyMs: 10 });
    observer.onAttempt({ ...base, outcome: 'bad_output' });

    const parsed = parsePrometheusText(await registry.render());
    const call = (outcome: string, tenant: string) => ({ target: 'cloud_main', target_type: 'cloud', model: 'gpt', outcome, tenant });
    expect(sampleValue(parsed, 'switchyard_upstream_calls_total', call('ok', 'acme'))).toBe(2);
    expect(sampleValue(parsed, 'switchyard_upstream_calls_total', call('error', '(none)'))).toBe(1);
    expect(sampleValue(parsed, 'switchyard_upstream_input_tokens_total', call('ok', 'acme'))).toBe(2000);
    expect(sampleValue(parsed, 'switchyard_upstream_output_tokens_total', call('ok', 'acme'))).toBe(400);
    expect(sampleValue(parsed, 'switchyard_upstream_cost_usd_total', call('ok', 'acme'))).toBe(1);
    expect(sampleValue(parsed, 'switchyard_upstream_latency_seconds_count', { target: 'cloud_main', model: 'gpt', outcome: 'ok' })).toBe(2);
    expect(sampleValue(parsed, 'switchyard_upstream_latency_seconds_sum', { target: 'cloud_main', model: 'gpt', outcome: 'ok' })).toBe(0.5);
    expect(sampleValue(parsed, 'switchyard_upstream_latency_seconds_bucket', { target: 'cloud_main', model: 'gpt', outcome: 'ok', le: '0.25' })).toBe(2);
    expect(sampleValue(parsed, 'switchyard_upstream_first_token_seconds_count', { target: 'cloud_main', model: 'gpt' })).toBe(2);
    expect(sampleValue(parsed, 'switchyard_upstream_errors_total', { target: 'cloud_main', error_class: 'rate_limited' })).toBe(1);
    expect(sampleValue(parsed, 'switchyard_upstream_errors_total', { target: 'cloud_main', error_class: 'bad_output' })).toBe(1);
  });

  it('counts retry budgets used up, by tenant', async () => {
    const registry = new MetricsRegistry();
    const observer = new UpstreamMetricsObserver(registry);
    observer.onRetryBudgetExhausted({ at: new Date(0), context: { jobId: 'job-1', tenantId: 'acme' }, limit: 12 });
    observer.onRetryBudgetExhausted({ at: new Date(0), context: undefined, limit: 12 });
    const parsed = parsePrometheusText(await registry.render());
    expect(sampleValue(parsed, 'switchyard_retry_budget_exhausted_total', { tenant: 'acme' })).toBe(1);
    expect(sampleValue(parsed, 'switchyard_retry_budget_exhausted_total', { tenant: '(none)' })).toBe(1);
  });
});
