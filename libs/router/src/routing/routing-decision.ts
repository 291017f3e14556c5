import type { RoutingPolicy, TargetConfig } from '../config/router-config.schema';

/** The rule name recorded for the policy-ordered step after every matching rule is exhausted. */
export const ANY_ELIGIBLE_RULE = '(any eligible)';
/** The rule name recorded when the operator's forced primary served the call. */
export const FORCED_PRIMARY_RULE = '(forced primary)';

/** One target looked at under one rule, in the order the decision looked at them. */
export interface CandidateRecord {
  target: string;
  rule: string;
  eligible: boolean;
  /** Why the target was dropped; absent for the chosen one. */
  reason?: string;
}

/** A weighted split the decision went through: each target's weight now and its share once filters dropped the others. */
export interface SplitExplanation {
  rule: string;
  /** True when the call's sticky key (its job, or the gateway's `user`) chose; false for a random draw. */
  sticky: boolean;
  /** Every target of the split, in config order; `reason` says why a target was dropped. */
  targets: { target: string; weight: number; share: number; eligible: boolean; reason?: string }[];
}

/** Everything needed to explain a decision, whether or not a target was found. */
export interface RoutingExplanation {
  policy: RoutingPolicy;
  candidates: CandidateRecord[];
  /** Names of every rule that matched the request, highest priority first. */
  matchedRules: string[];
  /** The weighted split of the rule that was tried (the first one, when several were). */
  split?: SplitExplanation;
}

export interface RoutingDecision extends RoutingExplanation {
  target: TargetConfig;
  /** The rule that chose the target, or `ANY_ELIGIBLE_RULE`. */
  rule: string;
}
