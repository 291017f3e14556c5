import { Controller, Get, Header, Inject } from '@nestjs/common';
import { MetricsRegistry, PROMETHEUS_CONTENT_TYPE } from '@switchyard/observability';
import { JobStatusMetrics } from './job-status.metrics';

/**
 * `GET /metrics`, Prometheus text. Without auth, as scrape endpoints usually are: it shows
 * counts, never tenant data or payloads. Keep the port internal where that matters.
 */
@Controller('metrics')
export class MetricsController {
  constructor(
    @Inject(MetricsRegistry) private readonly registry: MetricsRegistry,
    private readonly jobs: JobStatusMetrics,
  ) {}

  @Get()
  @Header('content-type', PROMETHEUS_CONTENT_TYPE)
  @Header('cache-control', 'no-store')
  async metrics(): Promise<string> {
    await this.jobs.refreshIfStale();
    return this.registry.render();
  }
}
