import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';

export const UPSTREAM_ERROR_CLASSES = ['network', 'timeout', 'rate_limited', 'server', 'auth', 'bad_request', 'unknown'] as const;
export type UpstreamErrorClass = (typeof UPSTREAM_ERROR_CLASSES)[number];

/** One failed upstream call, classified. Every class but `bad_request` is worth trying elsewhere. */
export class UpstreamError extends Error {
  readonly retryable: boolean;

  constructor(
    readonly target: string,
    readonly errorClass: UpstreamErrorClass,
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(`${target}: ${errorClass}${status === undefined ? '' : ` (${status})`}: ${message}`, options);
    this.name = 'UpstreamError';
    this.retryable = errorClass !== 'bad_request';
  }
}

export interface ClassifyContext {
  /** The router's own deadline for this attempt fired. */
  timedOut: boolean;
}

/** Maps whatever an upstream call threw onto an error class. */
export function classifyUpstreamError(error: unknown, context: ClassifyContext): { errorClass: UpstreamErrorClass; status?: number } {
  if (context.timedOut || error instanceof APIConnectionTimeoutError) return { errorClass: 'timeout' };
  if (error instanceof APIError && typeof error.status === 'number') return { errorClass: classifyStatus(error.status), status: error.status };
  if (error instanceof APIConnectionError) return { errorClass: 'network' };
  if (hasNetworkCode(error)) return { errorClass: 'network' };
  return { errorClass: 'unknown' };
}

export function classifyStatus(status: number): UpstreamErrorClass {
  if (status === 429) return 'rate_limited';
  if (status === 408) return 'timeout';
  if (status === 401 || status === 403) return 'auth';
  if (status >= 500) return 'server';
  if (status >= 400) return 'bad_request';
  return 'unknown';
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET']);

/** A socket failure while the body was being read surfaces as a plain error with a code somewhere in its causes. */
function hasNetworkCode(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  }
  return false;
}

/** A 503 that says the model is still loading (an inference server starting up): a cold start, not a failure. */
export function isModelLoading(status: number | undefined, text: string): boolean {
  return status === 503 && /loading/i.test(text);
}

/** The rate-limit headers an upstream sent with its error (a 429 usually carries them). */
export function errorQuotaHeaders(error: unknown): ((name: string) => string | null) | undefined {
  if (!(error instanceof APIError)) return undefined;
  const headers = error.headers as Headers | undefined;
  return headers === undefined ? undefined : (name) => headers.get(name);
}

/** The Retry-After an upstream sent with its error, in ms. */
export function retryAfterHeader(error: unknown): string | undefined {
  if (!(error instanceof APIError)) return undefined;
  const headers = error.headers as Headers | undefined;
  return headers?.get('retry-after') ?? undefined;
}
