import type { RequestMeta } from '@switchyard/contracts';
import type { TargetConfig } from '../config/router-config.schema';

export interface CandidateDrop {
  readonly reason: string;
}

/**
 * Decides whether one target may serve one request: `null` keeps it, a drop removes it
 * with a reason that ends up in the decision's explanation. Filters are pure and run in
 * order; the first drop wins. Health, breaker and quota checks plug in here.
 */
export type CandidateFilter = (target: TargetConfig, meta: RequestMeta) => CandidateDrop | null;

export const DROP_REASONS = {
  excluded: 'excluded',
  sensitiveRequiresLocal: 'sensitive_requires_local',
  missingApiKey: 'missing_api_key',
  contextWindow: 'context_window',
  dailyBudgetSpent: 'daily_budget_spent',
} as const;

const DAILY_BUDGET_DROP: CandidateDrop = { reason: DROP_REASONS.dailyBudgetSpent };

/** A tenant over its daily budget (SPEC §6): cloud targets are dropped, so its work degrades to local ones. */
export const dailyBudgetSpentFilter: CandidateFilter = (target) => (target.type === 'cloud' ? DAILY_BUDGET_DROP : null);

/** The hard constraint of SPEC §3.1. `decideRoute` applies it before anything else; it is not optional. */
export function sensitiveRequiresLocal(target: TargetConfig, meta: RequestMeta): CandidateDrop | null {
  return meta.sensitivity === 'sensitive' && target.type !== 'local' ? SENSITIVE_DROP : null;
}
const SENSITIVE_DROP: CandidateDrop = { reason: DROP_REASONS.sensitiveRequiresLocal };

const CONTEXT_WINDOW_DROP: CandidateDrop = { reason: DROP_REASONS.contextWindow };

/**
 * Skips a target when the request's estimated input would fill more than `maxShare` of its
 * context window (SPEC §3.3), leaving room for the answer. Requests without an estimate pass.
 */
export function contextWindowFilter(maxShare = 0.8): CandidateFilter {
  return (target, meta) =>
    meta.estimated_input_tokens !== undefined && meta.estimated_input_tokens > target.context_window * maxShare ? CONTEXT_WINDOW_DROP : null;
}
