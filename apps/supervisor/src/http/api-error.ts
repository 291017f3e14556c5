import { HttpException, HttpStatus } from '@nestjs/common';
import type { FieldIssue } from '@switchyard/contracts';

export interface ApiErrorBody {
  error: { code: string; message: string; issues?: FieldIssue[] };
}

/** Every 4xx/5xx body has this one shape: a stable code, a sentence, and the fields at fault. */
export class ApiError extends HttpException {
  /** `cause`: the internal error behind it, for the log only (the body never shows it). */
  constructor(status: HttpStatus, code: string, message: string, issues?: FieldIssue[], cause?: unknown) {
    super({ error: { code, message, ...(issues ? { issues } : {}) } } satisfies ApiErrorBody, status, cause === undefined ? undefined : { cause });
  }

  static badRequest(message: string, issues?: FieldIssue[]): ApiError {
    return new ApiError(HttpStatus.BAD_REQUEST, 'invalid_request', message, issues);
  }

  static notFound(what: string): ApiError {
    return new ApiError(HttpStatus.NOT_FOUND, 'not_found', `${what} not found`);
  }

  static conflict(code: string, message: string): ApiError {
    return new ApiError(HttpStatus.CONFLICT, code, message);
  }

  static unauthorized(message: string): ApiError {
    return new ApiError(HttpStatus.UNAUTHORIZED, 'unauthorized', message);
  }

  static unavailable(code: string, message: string): ApiError {
    return new ApiError(HttpStatus.SERVICE_UNAVAILABLE, code, message);
  }
}

/** A 503 (or 429) the client should retry after `retryAfterS` seconds (sent as `Retry-After`). */
export class RetryLaterError extends ApiError {
  constructor(
    code: string,
    message: string,
    readonly retryAfterS: number,
    status: HttpStatus = HttpStatus.SERVICE_UNAVAILABLE,
  ) {
    super(status, code, message);
  }
}
