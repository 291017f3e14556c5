import { MetricsRegistry } from './metrics-registry';
import { parsePrometheusText, sampleValue } from './prometheus-text';

describe('MetricsRegistry (prom-client)', () => {
  it('renders counters and gauges in the Prometheus text format', async () => {
    const registry = new MetricsRegistry();
    const calls = registry.counter('switchyard_upstream_calls_total', 'Upstream attempts.', ['target', 'outcome']);
    const up = registry.gauge('switchyard_up', 'Whether the process is up.');
    calls.inc({ target: 'local', outcome: 'ok' });
    calls.inc({ outcome: 'ok', target: 'local' }, 2);
    calls.inc({ target: 'cloud', outcome: 'error' });
    up.set({}, 1);

    const parsed = parsePrometheusText(await registry.render());
    expect(parsed.types.get('switchyard_upstream_calls_total')).toBe('counter');
    expect(sampleValue(parsed, 'switchyard_upstream_calls_total', { target: 'local', outcome: 'ok' })).toBe(3);
    expect(sampleValue(parsed, 'switchyard_upstream_calls_total', { target: 'cloud', outcome: 'error' })).toBe(1);
    expect(sampleValue(parsed, 'switchyard_up', {})).toBe(1);
  });

  it('renders histograms with cumulative buckets, a sum and a count', async () => {
    const registry = new MetricsRegistry();
    const latency = registry.histogram('switchyard_upstream_latency_seconds', 'Upstream latency.', ['target'], [0.1, 1]);
    latency.observe({ target: 'local' }, 0.05);
    latency.observe({ target: 'local' }, 0.5);
    latency.observe({ target: 'local' }, 5);
    latency.observe({ target: 'local' }, Number.NaN); // ignored

    const parsed = parsePrometheusText(await registry.render());
    expect(parsed.types.get('switchyard_upstream_latency_seconds')).toBe('histogram');
    expect(sampleValue(parsed, 'switchyard_upstream_latency_seconds_bucket', { target: 'local', le: '0.1' })).toBe(1);
    expect(sampleValue(parsed, 'switchyard_upstream_latency_seconds_bucket', { target: 'local', le: '1' })).toBe(2);
    expect(sampleValue(parsed, 'switchyard_upstream_latency_seconds_bucket', { target: 'local', le: '+Inf' })).toBe(3);
    expect(sampleValue(parsed, 'switchyard_upstream_latency_seconds_count', { target: 'local' })).toBe(3);
    expect(sampleValue(parsed, 'switchyard_upstream_latency_seconds_sum', { target: 'local' })).toBeCloseTo(5.55);
  });

  it('escapes label values', async () => {
    const registry = new MetricsRegistry();
    registry.counter('x_total', 'help', ['route']).inc({ route: '/v1/"jobs"\n' });
    expect(await registry.render()).toContain('x_total{route="/v1/\\"jobs\\"\\n"} 1\n');
  });

  it('reads collected metrics at scrape time, synchronously or not, replacing the last samples', async () => {
    const registry = new MetricsRegistry();
    let counts: [string, number][] = [['running', 1]];
    registry.collected('jobs', 'Jobs.', 'gauge', () => counts.map(([status, n]) => [{ status }, n] as const), ['status']);
    registry.collected('queue_jobs', 'Queue.', 'gauge', () => Promise.resolve([[{ role: 'extract' }, 4] as const]), ['role']);
    expect(sampleValue(parsePrometheusText(await registry.render()), 'jobs', { status: 'running' })).toBe(1);
    counts = [['success', 5]];
    const parsed = parsePrometheusText(await registry.render());
    expect(sampleValue(parsed, 'jobs', { status: 'success' })).toBe(5);
    expect(sampleValue(parsed, 'jobs', { status: 'running' })).toBeUndefined();
    expect(sampleValue(parsed, 'queue_jobs', { role: 'extract' })).toBe(4);
  });

  it('refuses bad names, duplicate metrics, wrong labels and decreasing counters', () => {
    const registry = new MetricsRegistry();
    expect(() => registry.counter('bad-name', 'x')).toThrow(/Invalid metric name/);
    const c = registry.counter('c_total', 'x', ['a']);
    expect(() => registry.gauge('c_total', 'x')).toThrow(/already been registered/);
    expect(() => c.inc({ b: '1' })).toThrow(/not included in initial labelset/);
    expect(() => c.inc({ a: '1' }, -1)).toThrow(/only go up/);
  });

  it('serves the Node default process metrics', async () => {
    const registry = new MetricsRegistry();
    registry.collectDefaultMetrics();
    const parsed = parsePrometheusText(await registry.render());
    expect(parsed.types.get('process_resident_memory_bytes')).toBe('gauge');
    expect(parsed.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
  });
});
