import { Catch, HttpException, HttpStatus, Inject, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ValidationError } from '@switchyard/contracts';
import { describeError, type Logger } from '@switchyard/observability';
import { LOGGER } from '@switchyard/platform';
import type { ApiErrorBody } from './api-error';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from './database-unavailable';

const CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'unavailable',
};

/** Turns every error into the one error body; unexpected ones are logged and hidden. */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn({ err: describeError(exception) }, 'request failed: the database is unavailable');
      const body: ApiErrorBody = { error: { code: 'database_unavailable', message: 'the database is unavailable; retry later' } };
      void reply.status(503).header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS)).header('content-type', 'application/json; charset=utf-8').send(body);
      return;
    }
    const { status, body } = this.toResponse(exception);
    if (status >= 500) this.logger.error({ err: exception }, 'request failed');
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
  }

  private toResponse(exception: unknown): { status: number; body: ApiErrorBody } {
    if (exception instanceof ValidationError) {
      return { status: 400, body: { error: { code: 'invalid_request', message: exception.message, issues: exception.issues } } };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const response = exception.getResponse();
      if (typeof response === 'object' && response !== null && 'error' in response && typeof response.error === 'object') {
        return { status, body: response as ApiErrorBody };
      }
      const raw = typeof response === 'string' ? response : ((response as { message?: unknown }).message ?? exception.message);
      return requestError(status, Array.isArray(raw) ? raw.join('; ') : String(raw));
    }
    // Errors raised by fastify itself before a route runs (body parsing, size, media type).
    const fastifyError = exception as { statusCode?: number; message?: string };
    if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
      return requestError(fastifyError.statusCode, fastifyError.message ?? 'bad request');
    }
    return { status: HttpStatus.INTERNAL_SERVER_ERROR, body: { error: { code: 'internal', message: 'internal error' } } };
  }
}

/** A 400 that is not ours came from parsing the request body: say so, and point at the body. */
function requestError(status: number, message: string): { status: number; body: ApiErrorBody } {
  const code = CODES[status] ?? 'error';
  if (status !== 400) return { status, body: { error: { code, message } } };
  const text = /JSON/i.test(message) ? `request body is not valid JSON (${message})` : message;
  return { status, body: { error: { code, message: text, issues: [{ path: '(body)', message: text }] } } };
}
