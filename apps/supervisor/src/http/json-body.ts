import { ValidationError, findUnsafeJson } from '@switchyard/contracts';

/** A request body refused before any route sees it; fastify reads `statusCode`, the error filter the issues. */
export class RequestBodyError extends ValidationError {
  readonly statusCode = 400;
}

/**
 * Every JSON body, before any schema: valid JSON, nested at most `MAX_JSON_DEPTH` deep, no
 * string or key with NUL or an unpaired surrogate, no prototype keys. Later code (hashing,
 * fingerprints, Postgres) may then recurse and store without a stack overflow or a refusal.
 */
export function parseJsonBody(text: string): unknown {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // The parser's own message quotes the body: not repeated.
    throw new RequestBodyError([{ path: '(body)', message: text.trim() === '' ? 'request body is empty' : 'request body is not valid JSON' }]);
  }
  const issue = findUnsafeJson(body);
  if (issue) throw new RequestBodyError([issue]);
  return body;
}
