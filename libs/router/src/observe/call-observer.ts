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
}

/**
 * Told of every upstream attempt. Called on the hot path: implementations must not block
 * (buffer and write in the background) and must not throw.
 */
export interface CallObserver {
  onAttempt(event: AttemptEvent): void;
}
