import type { TargetConfig } from '../config/router-config.schema';
import type { UpstreamQuotaReport } from '../quota/upstream-quota';

export type LimitReason = 'concurrency' | 'rpm' | 'tpm';

/** A slot on a target, held while one upstream attempt runs. */
export interface HeldSlot {
  /** Frees the slot; calling it again does nothing. */
  release(): void;
}

export type SlotResult = { granted: true; slot: HeldSlot } | { granted: false; reason: LimitReason; retryAfterMs: number };

/**
 * Who says whether one more attempt may go to a target now: its `max_concurrency`, `rpm`
 * and `tpm` counted for the whole fleet (see `RedisFleetLimiter`).
 */
export interface TargetLimiter {
  acquire(target: TargetConfig, tokens: number): Promise<SlotResult>;
  /** The upstream reported its own remaining requests / tokens (rate-limit headers): hold the fleet to them. */
  noteUpstreamQuota?(target: TargetConfig, report: UpstreamQuotaReport): void;
  close(): Promise<void>;
}
