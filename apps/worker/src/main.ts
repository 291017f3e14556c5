// First: the heap's growth limits apply to the GCs of module loading too.
import { limitHeapGrowth } from './memory/heap-limits';
const heapLimits = limitHeapGrowth();
import 'reflect-metadata';
import type { Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { loadConfigOrExit } from '@switchyard/config';
import { MetricsRegistry, createLogger, describeError, startTelemetry } from '@switchyard/observability';
import { DATABASE, NestPinoLogger, REDIS, checkDeploymentOrExit, closeOnSignals, type RedisConnection } from '@switchyard/platform';
import type { DatabaseHandle } from '@switchyard/state';
import { startWorkerHealthServer } from './health/worker-health.server';
import { WorkerModule } from './worker.module';

async function bootstrap(): Promise<void> {
  const config = loadConfigOrExit();
  await checkDeploymentOrExit(config);
  const logger = createLogger('worker', config.LOG_LEVEL);
  const telemetry = startTelemetry({
    serviceName: 'switchyard-worker',
    exportFromEnv: Boolean(config.OTEL_EXPORTER_OTLP_ENDPOINT ?? config.OTEL_TRACES_EXPORTER),
    logger,
  });
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config, logger), { logger: new NestPinoLogger(logger) });
  let health: Server | undefined;
  if (config.WORKER_PORT > 0) {
    health = await startWorkerHealthServer(
      config.WORKER_PORT,
      config.HOST ?? '127.0.0.1',
      app.get<DatabaseHandle>(DATABASE),
      app.get<RedisConnection>(REDIS),
      app.get(MetricsRegistry),
    );
    logger.info({ port: config.WORKER_PORT }, 'worker health endpoint listening');
  }
  closeOnSignals(app, logger, config.SHUTDOWN_GRACE_MS, async () => {
    health?.close();
    await telemetry.shutdown();
  });
  await app.init();
  heapLimits.startedUp();
}

bootstrap().catch((error: unknown) => {
  // describeError names every address of a refused dual-stack connect; the stack alone does not.
  process.stderr.write(`worker failed to start: ${describeError(error)}\n${error instanceof Error ? (error.stack ?? '') : ''}\n`);
  process.exit(1);
});
