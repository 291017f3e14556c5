import type { RouterFailure, RouterFailureCode } from '@switchyard/contracts';
import type { UpstreamErrorClass } from './upstream-error';

/** One upstream attempt of one call, as the caller records it (e.g. in `route_targets`). */
export interface AttemptRecord {
  target: string;
  model: string;
  rule: string;
  outcome: 'ok' | 'error';
  errorClass?: UpstreamErrorClass;
  status?: number;
  latencyMs: number;
  firstTokenMs?: number;
  message?: string;
  /** Shared another identical call's upstream attempt (coalescing): no upstream call of its own. */
  coalesced?: boolean;
}

/** Every attempt of a call failed. `cause` is the last `UpstreamError`. */
export class RouterCallError extends Error implements RouterFailure {
  readonly code: RouterFailureCode = 'upstream_failed';
  /** False only when every failure was a bad request: the same request will fail again anywhere. */
  readonly retryable: boolean;

  constructor(
    readonly attempts: readonly AttemptRecord[],
    readonly lastErrorClass: UpstreamErrorClass,
    options?: { cause?: unknown; reason?: string },
  ) {
    const summary = attempts.map((a) => `${a.target} ${a.errorClass ?? 'error'}${a.status === undefined ? '' : ` ${a.status}`}`).join(', ');
    super(`model call failed after ${attempts.length} attempt${attempts.length === 1 ? '' : 's'} (${summary})${options?.reason ? `; ${options.reason}` : ''}`, {
      cause: options?.cause,
    });
    this.name = 'RouterCallError';
    this.retryable = !attempts.every((attempt) => attempt.errorClass === 'bad_request');
  }
}

/** The caller's signal aborted the call; nothing is retried. */
export class CallAbortedError extends Error implements RouterFailure {
  readonly code = 'call_aborted' as const;
  readonly retryable = false;

  constructor(
    readonly attempts: readonly AttemptRecord[],
    options?: { cause?: unknown },
  ) {
    super(`model call aborted by the caller after ${attempts.length} attempt${attempts.length === 1 ? '' : 's'}`, options);
    this.name = 'CallAbortedError';
  }
}
