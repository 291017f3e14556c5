import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiErrorBody } from './api-error';

export function errorBody(code: string, message: string): ApiErrorBody {
  return { error: { code, message } };
}

/**
 * Errors fastify raises before routing (a URL that does not decode, a path parameter longer
 * than `maxParamLength`): the one error shape, and never the URL itself.
 */
export function frameworkErrorResponse(error: { code?: string; statusCode?: number }): { status: number; body: ApiErrorBody } {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return { status: 414, body: errorBody('uri_too_long', 'a path segment of the URL is too long') };
  if (error.code === 'FST_ERR_BAD_URL') return { status: 400, body: errorBody('invalid_request', 'the URL is not valid (bad percent-encoding)') };
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  return { status, body: errorBody('invalid_request', 'the request could not be routed') };
}

export function frameworkErrors(error: { code?: string; statusCode?: number }, _request: FastifyRequest, reply: FastifyReply): void {
  const { status, body } = frameworkErrorResponse(error);
  void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
}

/**
 * What Node's HTTP parser refuses (headers too large, control characters in a header, a
 * malformed request line) never reaches fastify's routing: the socket gets a raw response.
 * Its status follows the parser's error code.
 */
export function clientErrorResponse(errorCode: string | undefined): { status: number; body: ApiErrorBody } {
  switch (errorCode) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, body: errorBody('headers_too_large', 'the request headers are too large') };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, body: errorBody('request_timeout', 'the request was not received in time') };
    default:
      return { status: 400, body: errorBody('invalid_request', 'the request is not valid HTTP (a malformed request line or header)') };
  }
}

export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, body } = clientErrorResponse(error.code);
  const text = JSON.stringify(body);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy(error);
}
