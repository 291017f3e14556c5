import { MetricsRegistry, escapeLabelValue } from './metrics-registry';

describe('MetricsRegistry', () => {
  it('renders counters and gauges in the Prometheus text format', () => {
    const registry = new MetricsRegistry();
    const calls = registry.counter('switchyard_upstream_calls_total', 'Upstream attempts.', ['target', 'outcome']);
    const up = registry.gauge('switchyard_up', 'Whether the process is up.');
    calls.inc({ target: 'local', outcome: 'ok' });
    calls.inc({ outcome: 'ok', target: 'local' }, 2); // label order does not matter
    calls.inc({ target: 'cloud', outcome: 'error' });
    up.set({}, 1);

    expect(registry.render()).toBe(
      [
        '# HELP switchyard_upstream_calls_total Upstream attempts.',
        '# TYPE switchyard_upstream_calls_total counter',
        'switchyard_upstream_calls_total{target="local",outcome="ok"} 3',
        'switchyard_upstream_calls_total{target="cloud",outcome="error"} 1',
        '# HELP switchyard_up Whether the process is up.',
        '# TYPE switchyard_up gauge',
        'switchyard_up 1',
        '',
      ].join('\n'),
    );
    expect(calls.get({ target: 'local', outcome: 'ok' })).toBe(3);
  });

  it('escapes label values and help text', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
    const registry = new MetricsRegistry();
    registry.counter('x_total', 'line one\nback\\slash', ['route']).inc({ route: '/v1/"jobs"\n' });
    expect(registry.render()).toBe('# HELP x_total line one\\nback\\\\slash\n# TYPE x_total counter\nx_total{route="/v1/\\"jobs\\"\\n"} 1\n');
  });

  it('renders fractional, infinite and NaN values', () => {
    const registry = new MetricsRegistry();
    const g = registry.gauge('g', 'g', ['k']);
    g.set({ k: 'a' }, 0.125);
    g.set({ k: 'b' }, Number.POSITIVE_INFINITY);
    g.set({ k: 'c' }, Number.NaN);
    expect(registry.render()).toContain('g{k="a"} 0.125\ng{k="b"} +Inf\ng{k="c"} NaN\n');
  });

  it('reads collected metrics at scrape time', () => {
    const registry = new MetricsRegistry();
    let n = 1;
    registry.collected('jobs', 'Jobs.', 'gauge', () => [[{ status: 'running' }, n]]);
    expect(registry.render()).toContain('# TYPE jobs gauge\njobs{status="running"} 1');
    n = 5;
    expect(registry.render()).toContain('jobs{status="running"} 5');
  });

  it('refuses bad names, duplicate metrics, wrong labels and decreasing counters', () => {
    const registry = new MetricsRegistry();
    expect(() => registry.counter('bad-name', 'x')).toThrow(/invalid metric name/);
    expect(() => registry.counter('ok_total', 'x', ['bad-label'])).toThrow(/invalid label name/);
    const c = registry.counter('c_total', 'x', ['a']);
    expect(() => registry.gauge('c_total', 'x')).toThrow(/already registered/);
    expect(() => c.inc({ b: '1' })).toThrow(/takes labels \[a\]/);
    expect(() => c.inc({ a: '1' }, -1)).toThrow(/only go up/);
  });

  it('renders nothing for an empty registry, and HELP/TYPE for a metric with no samples yet', () => {
    const registry = new MetricsRegistry();
    expect(registry.render()).toBe('');
    registry.counter('c_total', 'help');
    expect(registry.render()).toBe('# HELP c_total help\n# TYPE c_total counter\n');
  });
});
