import { Catch, Inject, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Logger } from '@switchyard/observability';
import { LOGGER } from '@switchyard/platform';
import type { ApiErrorBody } from './api-error';
import { clientGoneFrom, errorResponseOf, logRequestError } from './error-responses';

/** Turns every error into the one error body; unexpected ones are logged and hidden. */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const response = errorResponseOf(exception);
    logRequestError(this.logger, exception, response, clientGoneFrom(reply.raw));
    if (reply.raw.destroyed || reply.raw.headersSent) return;
    if (response.retryAfterS !== undefined) void reply.header('retry-after', String(response.retryAfterS));
    void reply.status(response.status).header('content-type', 'application/json; charset=utf-8').send(this.present(response.status, response.body));
  }

  /** The body as sent; a route family with another error dialect (the OpenAI gateway) overrides it. */
  protected present(_status: number, body: ApiErrorBody): unknown {
    return body;
  }
}
