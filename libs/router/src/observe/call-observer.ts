import type { RequestMeta } from '@switchyard/contracts';
import type { UpstreamErrorClass } from '../calls/upstream-error';
import type { TargetConfig } from '../config/router-config.schema';
import type { CallContext } from '../router';

/** One upstream attempt, as the cost ledger and metrics record it. */
export interface AttemptEvent {
  at: Date;
  target: Pick<TargetConfig, 'name' | 'type' | 'model'>;
  rule: string;
  meta: RequestMeta;
  context: CallContext | undefined;
  outcome: 'ok' | 'error' | 'bad_output';
  errorClass?: UpstreamErrorClass;
  status?: number;
  usage?: { inputTokens: number; outputTokens: number; estimated: boolean };
  latencyMs: number;
  firstTokenMs?: number;
  costUsd: number;
  /** The attempt's number within its call, from 1. */
  attempt: number;
  /** The caller records this attempt itself, durably (`ChatCallRequest.attemptRecorder`): buffered ledgers skip it. */
  recordedByCaller?: boolean;
}

/** An attempt about to go upstream: what a durable ledger records before the request is sent. */
export interface AttemptStart {
  at: Date;
  attempt: number;
  target: Pick<TargetConfig, 'name' | 'type' | 'model'>;
  rule: string;
  meta: RequestMeta;
  context: CallContext | undefined;
  /** The input as estimated before the call, and its price: all that is known of an attempt that never finishes. */
  estimatedInputTokens: number;
  estimatedInputCostUsd: number;
}

/**
 * One call's own record of its attempts (the worker's durable ledger), beside the observers.
 * `started` is awaited before each attempt's request is sent, and a rejection fails the call
 * (nothing was sent); `finished` is told of the outcome of every attempt and must not throw.
 */
export interface AttemptRecorder {
  started(attempt: AttemptStart): Promise<void>;
  finished(event: AttemptEvent): void;
}

/** A retry budget ran out: the failed attempt that used its last unit. */
export interface RetryBudgetExhaustedEvent {
  at: Date;
  context: CallContext | undefined;
  limit: number;
}

/**
 * Told of every upstream attempt. Called on the hot path: implementations must not block
 * (buffer and write in the background) and must not throw.
 */
export interface CallObserver {
  onAttempt(event: AttemptEvent): void;
  /** Once per budget, in the process whose failed attempt used it up. */
  onRetryBudgetExhausted?(event: RetryBudgetExhaustedEvent): void;
}
