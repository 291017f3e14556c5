import { Catch, HttpException, HttpStatus, Inject, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ValidationError, routerFailureOf, truncateForEcho } from '@switchyard/contracts';
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
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  431: 'headers_too_large',
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
      void reply.status(503).header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS)).header('content-type', 'application/json; charset=utf-8').send(this.present(503, body));
      return;
    }
    const { status, body } = this.toResponse(exception);
    this.log(exception, status, body, reply);
    if (reply.raw.destroyed || reply.raw.headersSent) return;
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(this.present(status, body));
  }

  /** The body as sent; a route family with another error dialect (the OpenAI gateway) overrides it. */
  protected present(_status: number, body: ApiErrorBody): unknown {
    return body;
  }

  /**
   * Only the unexpected is an error with a stack. A client that went away and an answer we
   * chose (503 busy, 502 upstream failed) are ordinary events; the cause, with details the
   * tenant is not shown, goes to the log here.
   */
  private log(exception: unknown, status: number, body: ApiErrorBody, reply: FastifyReply): void {
    if (clientWentAway(exception, reply)) {
      this.logger.info({ code: body.error.code, reason: errorMessage(exception) }, 'request ended: the client went away');
      return;
    }
    if (exception instanceof HttpException) {
      // A 4xx with an internal cause (the context windows behind a context_length_exceeded) keeps that cause in the log.
      if (status >= 500) this.logger.warn({ status, code: body.error.code, reason: errorMessage(exception.cause ?? exception) }, 'request answered with an error');
      else if (exception.cause !== undefined) this.logger.info({ status, code: body.error.code, reason: errorMessage(exception.cause) }, 'request answered with an error');
      return;
    }
    if (status >= 500) this.logger.error({ err: exception }, 'request failed');
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
    // Errors raised by fastify itself before a route runs (size, media type, content length).
    const fastifyError = exception as { statusCode?: number; message?: string };
    if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
      return requestError(fastifyError.statusCode, fastifyError.message ?? 'bad request');
    }
    return { status: HttpStatus.INTERNAL_SERVER_ERROR, body: { error: { code: 'internal', message: 'internal error' } } };
  }
}

/**
 * A 4xx that is not ours (fastify's, Nest's "Cannot GET /…"): its message may repeat the
 * URL or a header, so only a short cut of it is repeated. A 400 points at the body.
 */
function requestError(status: number, message: string): { status: number; body: ApiErrorBody } {
  const code = CODES[status] ?? 'error';
  const text = truncateForEcho(message, 120);
  if (status !== 400) return { status, body: { error: { code, message: text } } };
  return { status, body: { error: { code, message: text, issues: [{ path: '(body)', message: text }] } } };
}

/** The caller hung up: its socket is gone, or the router stopped the call because of that (CallAbortedError). */
function clientWentAway(exception: unknown, reply: FastifyReply): boolean {
  if (reply.raw.destroyed || reply.raw.socket?.destroyed === true) return true;
  return routerFailureOf(exception)?.code === 'call_aborted' || (exception instanceof Error && exception.name === 'AbortError');
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
