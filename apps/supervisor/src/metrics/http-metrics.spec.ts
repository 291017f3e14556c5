import type { HttpAdapterHost } from '@nestjs/core';
import { MetricsRegistry } from '@switchyard/observability';
import { HttpMetrics } from './http-metrics';

describe('HttpMetrics', () => {
  it('counts requests by method, route pattern and status; unmatched routes share one label', () => {
    const registry = new MetricsRegistry();
    const metrics = new HttpMetrics(registry, {} as HttpAdapterHost);
    metrics.record('GET', '/v1/jobs/:id', 200, 12);
    metrics.record('GET', '/v1/jobs/:id', 200, 8);
    metrics.record('GET', undefined, 404, 1);
    metrics.record('POST', '/v1/jobs', 400, Number.NaN);
    const text = registry.render();
    expect(text).toContain('switchyard_http_requests_total{method="GET",route="/v1/jobs/:id",status="200"} 2\n');
    expect(text).toContain('switchyard_http_requests_total{method="GET",route="(unmatched)",status="404"} 1\n');
    expect(text).toContain('switchyard_http_requests_total{method="POST",route="/v1/jobs",status="400"} 1\n');
    expect(text).toContain('switchyard_http_request_duration_seconds_total{method="GET",route="/v1/jobs/:id"} 0.02\n');
    expect(text).toContain('switchyard_http_request_duration_seconds_total{method="POST",route="/v1/jobs"} 0\n');
  });
});
