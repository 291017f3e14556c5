import { Module } from '@nestjs/common';
import { DATABASE } from '@switchyard/platform';
import { JobStatsRepository, type DatabaseHandle } from '@switchyard/state';
import { HttpMetrics } from './http-metrics';
import { JobStatusMetrics } from './job-status.metrics';
import { MetricsController } from './metrics.controller';

/** `GET /metrics` and what only the supervisor counts (HTTP requests, jobs); the registry comes from LedgerModule. */
@Module({
  controllers: [MetricsController],
  providers: [
    HttpMetrics,
    JobStatusMetrics,
    { provide: JobStatsRepository, inject: [DATABASE], useFactory: (database: DatabaseHandle) => new JobStatsRepository(database.db) },
  ],
  // The chat route below fastify counts its requests itself.
  exports: [HttpMetrics],
})
export class MetricsModule {}
