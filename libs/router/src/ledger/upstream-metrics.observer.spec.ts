import { MetricsRegistry } from '@switchyard/observability';
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
  it('counts calls, tokens, cost and latency per target and outcome, and errors per class', () => {
    const registry = new MetricsRegistry();
    const observer = new UpstreamMetricsObserver(registry);
    observer.onAttempt(base);
    observer.onAttempt(base);
    observer.onAttempt({ ...base, outcome: 'error', errorClass: 'rate_limited', status: 429, usage: undefined, costUsd: 0, latencyMs: 10 });
    observer.onAttempt({ ...base, outcome: 'bad_output' });

    const text = registry.render();
    expect(text).toContain('switchyard_upstream_calls_total{target="cloud_main",outcome="ok"} 2\n');
    expect(text).toContain('switchyard_upstream_calls_total{target="cloud_main",outcome="error"} 1\n');
    expect(text).toContain('switchyard_upstream_input_tokens_total{target="cloud_main",outcome="ok"} 2000\n');
    expect(text).toContain('switchyard_upstream_output_tokens_total{target="cloud_main",outcome="ok"} 400\n');
    expect(text).toContain('switchyard_upstream_cost_usd_total{target="cloud_main",outcome="ok"} 1\n');
    expect(text).toContain('switchyard_upstream_latency_seconds_total{target="cloud_main",outcome="ok"} 0.5\n');
    expect(text).toContain('switchyard_upstream_errors_total{target="cloud_main",error_class="rate_limited"} 1\n');
    expect(text).toContain('switchyard_upstream_errors_total{target="cloud_main",error_class="bad_output"} 1\n');
  });
});
