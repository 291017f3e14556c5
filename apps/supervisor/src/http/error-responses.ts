import type { ServerResponse } from 'node:http';
import { HttpException, HttpStatus } from '@nestjs/common';
import { ValidationError, routerFailureOf, truncateForEcho } from '@switchyard/contracts';
import { describeError, type Logger } from '@switchyard/observability';
import { RetryLaterError, type ApiErrorBody } from './api-error';
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

/** What an error is answered with: the one error body, its status, and when to come back if that is known. */
export interface ErrorResponse {
  status: number;
  body: ApiErrorBody;
  retryAfterS?: number;
}

/**
 * The answer to any error a request ends with, whichever layer raised it (ours, Nest's,
 * fastify's, the request-body reader below fastify); anything unexpected is a bare 500 that
 * shows nothing of its cause.
 */
export function errorResponseOf(exception: unknown): ErrorResponse {
  if (isDatabaseUnavailable(exception)) {
    return { status: 503, body: { error: { code: 'database_unavailable', message: 'the database is unavailable; retry later' } }, retryAfterS: DATABASE_RETRY_AFTER_SECONDS };
  }
  if (exception instanceof ValidationError) {
    return { status: 400, body: { error: { code: 'invalid_request', message: exception.message, issues: exception.issues } } };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const retryAfterS = exception instanceof RetryLaterError ? { retryAfterS: exception.retryAfterS } : {};
    const response = exception.getResponse();
    if (typeof response === 'object' && response !== null && 'error' in response && typeof response.error === 'object') {
      return { status, body: response as ApiErrorBody, ...retryAfterS };
    }
    const raw = typeof response === 'string' ? response : ((response as { message?: unknown }).message ?? exception.message);
    return requestError(status, Array.isArray(raw) ? raw.join('; ') : String(raw));
  }
  // Errors raised before a route runs (size, media type, content length): fastify's and the chat route's.
  const early = exception as { statusCode?: number; message?: string };
  if (typeof early.statusCode === 'number' && early.statusCode >= 400 && early.statusCode < 500) {
    return requestError(early.statusCode, early.message ?? 'bad request');
  }
  return { status: HttpStatus.INTERNAL_SERVER_ERROR, body: { error: { code: 'internal', message: 'internal error' } } };
}

/**
 * Only the unexpected is an error with a stack. A client that went away and an answer we
 * chose (503 busy, 502 upstream failed) are ordinary events; the cause, with details the
 * tenant is not shown, goes to the log here.
 */
export function logRequestError(logger: Logger, exception: unknown, { status, body }: ErrorResponse, clientGone: boolean): void {
  if (clientGone || routerFailureOf(exception)?.code === 'call_aborted' || (exception instanceof Error && exception.name === 'AbortError')) {
    logger.info({ code: body.error.code, reason: errorMessage(exception) }, 'request ended: the client went away');
    return;
  }
  if (isDatabaseUnavailable(exception)) {
    logger.warn({ err: describeError(exception) }, 'request failed: the database is unavailable');
    return;
  }
  if (exception instanceof HttpException) {
    // A 4xx with an internal cause (the context windows behind a context_length_exceeded) keeps that cause in the log.
    if (status >= 500) logger.warn({ status, code: body.error.code, reason: errorMessage(exception.cause ?? exception) }, 'request answered with an error');
    else if (exception.cause !== undefined) logger.info({ status, code: body.error.code, reason: errorMessage(exception.cause) }, 'request answered with an error');
    return;
  }
  if (status >= 500) logger.error({ err: exception }, 'request failed');
}

/**
 * A 4xx that is not ours (fastify's, Nest's "Cannot GET /…"): its message may repeat the
 * URL or a header, so only a short cut of it is repeated. A 400 points at the body.
 */
function requestError(status: number, message: string): ErrorResponse {
  const code = CODES[status] ?? 'error';
  const text = truncateForEcho(message, 120);
  if (status !== 400) return { status, body: { error: { code, message: text } } };
  return { status, body: { error: { code, message: text, issues: [{ path: '(body)', message: text }] } } };
}

/** Whether the client hung up: its socket is gone, so nothing more can be sent. */
export function clientGoneFrom(response: ServerResponse): boolean {
  return response.destroyed || response.socket?.destroyed === true;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
