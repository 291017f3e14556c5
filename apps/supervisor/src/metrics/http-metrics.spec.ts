import type { HttpAdapterHost } from '@nestjs/core';
import { MetricsRegistry, parsePrometheusText, sampleValue } from '@switchyard/observability';
import { HttpMetrics } from './http-metrics';

describe('HttpMetrics', () => {
  it('counts requests by method, route pattern and status, durations as a histogram; unmatched routes share one label', async () => {
    const registry = new MetricsRegistry();
    const metrics = new HttpMetrics(registry, {} as HttpAdapterHost);
    metrics.record('GET', '/v1/jobs/:id', 200, 12);
    metrics.record('GET', '/v1/jobs/:id', 200, 8);
    metrics.record('GET', undefined, 404, 1);
    metrics.record('POST', '/v1/jobs', 400, Number.NaN);
    const parsed = parsePrometheusText(await registry.render());
    expect(sampleValue(parsed, 'switchyard_http_requests_total', { method: 'GET', route: '/v1/jobs/:id', status: '200' })).toBe(2);
    expect(sampleValue(parsed, 'switchyard_http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' })).toBe(1);
    expect(sampleValue(parsed, 'switchyard_http_requests_total', { method: 'POST', route: '/v1/jobs', status: '400' })).toBe(1);
    expect(sampleValue(parsed, 'switchyard_http_request_duration_seconds_sum', { method: 'GET', route: '/v1/jobs/:id', status: '200' })).toBeCloseTo(0.02);
    expect(sampleValue(parsed, 'switchyard_http_request_duration_seconds_bucket', { method: 'GET', route: '/v1/jobs/:id', status: '200', le: '0.01' })).toBe(1);
    expect(sampleValue(parsed, 'switchyard_http_request_duration_seconds_count', { method: 'POST', route: '/v1/jobs', status: '400' })).toBe(1);
  });
});
