import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfigOrExit } from '@switchyard/config';
import { createLogger, describeError, startTelemetry } from '@switchyard/observability';
import { NestPinoLogger, checkDeploymentOrExit, closeOnSignals } from '@switchyard/platform';
import { preloadTokenizer } from '@switchyard/router';
import { SupervisorModule } from './app.module';
import { ChatCompletionsRoute } from './gateway/chat-completions.route';
import { clientErrorHandler, frameworkErrors } from './http/framework-errors';
import { traceHttpRequests } from './http/http-tracing';
import { parseJsonBody } from './http/json-body';
import { resolveListenHost } from './http/listen-host';
import { RoutesBelowFastify } from './http/routes-below-fastify';
import { serveStaticAssets } from './static/static-assets';

async function bootstrap(): Promise<void> {
  const config = loadConfigOrExit();
  // The gateway counts every request's tokens exactly: load the tables now, not on the first request.
  preloadTokenizer();
  await checkDeploymentOrExit(config);
  const logger = createLogger('supervisor', config.LOG_LEVEL);
  const telemetry = startTelemetry({
    serviceName: 'switchyard-supervisor',
    exportFromEnv: Boolean(config.OTEL_EXPORTER_OTLP_ENDPOINT ?? config.OTEL_TRACES_EXPORTER),
    logger,
  });
  const host = resolveListenHost(config);
  if (config.API_KEYS.size === 0) {
    logger.warn(
      { host },
      'DEV MODE: API_KEYS is not set, so every request runs as tenant "dev" without authentication; listening on loopback only. Set API_KEYS=tenant:key,... for any shared use.',
    );
  }
  const routesBelowFastify = new RoutesBelowFastify();
  const app = await NestFactory.create<NestFastifyApplication>(
    SupervisorModule.forRoot(config, logger),
    new FastifyAdapter({ bodyLimit: config.MAX_BODY_BYTES, frameworkErrors, clientErrorHandler, genReqId: () => randomUUID(), serverFactory: routesBelowFastify.serverFactory }),
    { logger: new NestPinoLogger(logger), bufferLogs: false, bodyParser: false },
  );
  // Our JSON parser instead of fastify's: it bounds nesting and refuses NUL, lone surrogates and prototype keys, naming the path.
  const fastify = app.getHttpAdapter().getInstance();
  traceHttpRequests(fastify);
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => {
    try {
      done(null, parseJsonBody(String(text)));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  routesBelowFastify.mount(app.get(ChatCompletionsRoute));
  await serveStaticAssets(app, logger);
  await app.listen(config.PORT, host);
  logger.info({ port: config.PORT, host, queue_prefix: config.QUEUE_PREFIX }, 'supervisor listening');
  closeOnSignals(app, logger, config.SHUTDOWN_GRACE_MS, () => telemetry.shutdown());
}

bootstrap().catch((error: unknown) => {
  // describeError names every address of a refused dual-stack connect; the stack alone does not.
  process.stderr.write(`supervisor failed to start: ${describeError(error)}\n${error instanceof Error ? (error.stack ?? '') : ''}\n`);
  process.exit(1);
});
