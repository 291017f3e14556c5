import type { RequestMeta } from '@switchyard/contracts';
import type { CanarySnapshot } from '../canary/canary-status';
import type { RoutingDecision, SplitExplanation } from '../routing/routing-decision';
import type { TargetWeightView } from '../weights/weight-book';

/**
 * What operators and the admin API see of and do to the router. The Router implements it;
 * the supervisor's admin endpoints (GET /admin/targets, POST /admin/routing/explain, drain /
 * enable / force-primary) are thin views over it.
 */
export type BreakerState = 'closed' | 'open' | 'half_open';
export type TargetAvailability = 'available' | 'degraded' | 'overloaded' | 'unavailable' | 'drained' | 'cold_start';

export interface TargetSnapshot {
  name: string;
  type: 'local' | 'cloud';
  model: string;
  /** The target's endpoint with any user and password in it as `***` (`redactUrl`). */
  endpoint: string;
  state: TargetAvailability;
  breaker: BreakerState;
  /** Health score 0..100. */
  score: number;
  /** Share of its traffic the target may take now (recovery steps 10 → 30 → 60 → 100 %). */
  share: number;
  inFlight: number;
  maxConcurrency: number;
  latencyMs: { p50: number | null; p95: number | null };
  firstTokenMs: { p50: number | null; p95: number | null; mean5m: number | null };
  errorRate: number;
  requests: number;
  drained: boolean;
  forcedPrimary: boolean;
  /** Every weighted split the target is in: its configured weight and the weight now (dynamic weights move it). */
  weights: TargetWeightView[];
  /** The business canaries' last verdict (failing cases with what was expected and what came back); null without canaries. */
  canary: CanarySnapshot | null;
}

/** An explained decision, as the admin API returns it: dropped candidates with reasons, scores, the choice. */
export interface DecisionExplanation extends Pick<RoutingDecision, 'rule' | 'policy' | 'matchedRules'> {
  chosen: string | null;
  /** The weighted split the call went through: weights now and each target's share after the filters. */
  split?: SplitExplanation;
  candidates: { target: string; rule: string; eligible: boolean; reason?: string; score?: number }[];
  error?: string;
}

export interface RouterAdmin {
  snapshot(): TargetSnapshot[];
  explain(meta: RequestMeta): DecisionExplanation;
  /** A drained target takes no new calls until enabled again. */
  drain(target: string): void;
  enable(target: string): void;
  /**
   * The manual switch (seed 004 §4.3): prefer this target for every call it may serve —
   * never a sensitive call to a cloud target. `null` returns to normal routing.
   */
  forcePrimary(target: string | null): void;
}
