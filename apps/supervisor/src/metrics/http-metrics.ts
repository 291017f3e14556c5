import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { MetricsRegistry, type Counter, type Histogram } from '@switchyard/observability';

/** The route label of a request no route matched (404s), so unknown paths cannot blow up the label set. */
export const UNMATCHED_ROUTE = '(unmatched)';

/**
 * HTTP requests by method, route pattern (`/v1/jobs/:id`, not the raw URL) and status,
 * counted in a fastify `onResponse` hook so that guard rejections, 404s and body-parser
 * errors are counted too, which a Nest interceptor would miss.
 */
@Injectable()
export class HttpMetrics implements OnModuleInit {
  private readonly requests: Counter;
  private readonly seconds: Histogram;

  constructor(
    @Inject(MetricsRegistry) registry: MetricsRegistry,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    this.requests = registry.counter('switchyard_http_requests_total', 'HTTP requests answered, by route and status.', ['method', 'route', 'status']);
    this.seconds = registry.histogram('switchyard_http_request_duration_seconds', 'Time to answer HTTP requests, by route and status.', ['method', 'route', 'status']);
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (typeof fastify?.addHook !== 'function') return; // an application context without HTTP
    fastify.addHook('onResponse', (request, reply, done) => {
      this.record(request.method, request.routeOptions?.url, reply.statusCode, reply.elapsedTime);
      done();
    });
  }

  record(method: string, route: string | undefined, status: number, elapsedMs: number): void {
    const routeLabel = route ?? UNMATCHED_ROUTE;
    this.requests.inc({ method, route: routeLabel, status });
    this.seconds.observe({ method, route: routeLabel, status }, Number.isFinite(elapsedMs) && elapsedMs > 0 ? elapsedMs / 1000 : 0);
  }
}
