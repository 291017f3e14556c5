import type { UpstreamErrorClass } from '../calls/upstream-error';

/** Every way an attempt can fail, as health tracking counts it. */
export type FailureClass = UpstreamErrorClass | 'bad_output';

export interface HealthSettings {
  /** Below this score (0..100) a target is excluded. */
  threshold: number;
  successGain: number;
  failurePenalty: number;
  /** Bad output is a softer signal than a dead socket (seed 003: 5 in a row before it counts as down). */
  badOutputPenalty: number;
  /** This many consecutive failures of any counted class drop the score to 0. */
  consecutiveToZero: number;
  /** Per class: this many consecutive failures of that class drop the score to 0 (seed 003). */
  classThresholds: Partial<Record<FailureClass, number>>;
  /** An excluded target gets one trial call this long after its last failure. */
  retryAfterMs: number;
  /** Passive window: samples older than this are ignored. */
  windowMs: number;
  /** Passive window: at most this many samples are kept. */
  windowSize: number;
}

export const DEFAULT_HEALTH_SETTINGS: HealthSettings = {
  threshold: 30,
  successGain: 10,
  failurePenalty: 30,
  badOutputPenalty: 15,
  consecutiveToZero: 3,
  classThresholds: { network: 2, timeout: 3, server: 3, bad_output: 5 },
  retryAfterMs: 30_000,
  windowMs: 5 * 60_000,
  windowSize: 256,
};

/** Classes that say nothing about the target's health: the caller's mistake, or a quota. */
export function countsAgainstHealth(failure: FailureClass): boolean {
  return failure !== 'bad_request' && failure !== 'rate_limited';
}
