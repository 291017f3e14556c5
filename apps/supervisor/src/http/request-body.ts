import type { IncomingMessage } from 'node:http';
import { parseJsonBody } from './json-body';

/** A body refused before it is parsed; `statusCode` is what the error mapping answers (as it does for fastify's own). */
export class RequestBodyRefusedError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'RequestBodyRefusedError';
  }
}

/**
 * The JSON body of a request served below fastify, under fastify's rules for the other routes:
 * `application/json` only (415 otherwise, or for a body without a type), at most `limitBytes`
 * (413, from `Content-Length` before anything is read or while reading), then `parseJsonBody`'s
 * rules (400 naming the path). A request without a body and without a type has none
 * (`undefined`): the route's schema says what is missing.
 */
export function readJsonRequestBody(request: IncomingMessage, limitBytes: number): Promise<unknown> {
  const { headers } = request;
  const declaredLength = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  const type = headers['content-type'];
  if (type === undefined) {
    if (headers['transfer-encoding'] === undefined && (declaredLength === undefined || declaredLength === 0)) return Promise.resolve(undefined);
    return Promise.reject(new RequestBodyRefusedError(415, 'Unsupported Media Type'));
  }
  if (!isJsonMediaType(type)) return Promise.reject(new RequestBodyRefusedError(415, 'Unsupported Media Type'));
  if (declaredLength !== undefined && declaredLength > limitBytes) return Promise.reject(new RequestBodyRefusedError(413, 'Request body is too large'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const stop = (error: Error) => {
      request.removeListener('data', onData);
      request.removeListener('end', onEnd);
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limitBytes) stop(new RequestBodyRefusedError(413, 'Request body is too large'));
      else chunks.push(chunk);
    };
    const onEnd = () => {
      request.removeListener('data', onData);
      if (declaredLength !== undefined && received !== declaredLength) {
        reject(new RequestBodyRefusedError(400, 'Request body size did not match Content-Length'));
        return;
      }
      try {
        resolve(parseJsonBody((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)).toString('utf8')));
      } catch (error) {
        reject(error as Error);
      }
    };
    request.on('data', onData);
    request.once('end', onEnd);
    request.once('error', stop);
    request.once('close', () => {
      if (!request.complete) stop(new Error('the client went away before its request body ended'));
    });
  });
}

/** `application/json`, with or without parameters (`; charset=utf-8`), in any letter case. */
export function isJsonMediaType(contentType: string): boolean {
  const semicolon = contentType.indexOf(';');
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase() === 'application/json';
}
