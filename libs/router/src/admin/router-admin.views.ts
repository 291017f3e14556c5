import { redactUrl } from '../config/redact-url';
import type { RouterConfig, RoutingPolicy, TargetConfig } from '../config/router-config.schema';
import { isOverloaded } from '../quota/overload';
import type { RoutingDecision, RoutingExplanation } from '../routing/routing-decision';
import type { TargetState } from '../state/target-state';
import type { TargetWeightView } from '../weights/weight-book';
import type { DecisionExplanation, TargetAvailability, TargetSnapshot } from './router-admin';

/** An operator named a target the config does not have. */
export class UnknownTargetError extends Error {
  constructor(
    readonly target: string,
    known: readonly string[],
  ) {
    super(`unknown target "${target}"; known targets: ${known.join(', ')}`);
    this.name = 'UnknownTargetError';
  }
}

export function snapshotTarget(
  target: TargetConfig,
  state: TargetState,
  now: number,
  config: RouterConfig,
  forcedPrimary: boolean,
  weights: TargetWeightView[] = [],
): TargetSnapshot {
  const stats = state.window.stats(now);
  const breaker = state.breaker.state(now);
  const share = state.ramp.recovering ? state.ramp.share(now) : 100;
  const overload = { firstTokenMs: config.overload.first_token_ms, queue: config.overload.queue };
  let availability: TargetAvailability = 'available';
  if (state.drained) availability = 'drained';
  else if (state.coldStart) availability = 'cold_start';
  else if (breaker === 'open' || state.health.isBelowThreshold() || state.canary.failing) availability = 'unavailable';
  else if (target.type === 'local' && isOverloaded(stats.firstTokenMs.mean, state.inFlight, target.max_concurrency, overload)) availability = 'overloaded';
  else if (breaker === 'half_open' || share < 100 || (stats.successRate !== null && stats.successRate < 0.7)) availability = 'degraded';
  return {
    name: target.name,
    type: target.type,
    model: target.model,
    endpoint: redactUrl(target.endpoint),
    state: availability,
    breaker,
    score: state.health.score,
    share,
    inFlight: state.inFlight,
    maxConcurrency: target.max_concurrency,
    latencyMs: stats.latencyMs,
    firstTokenMs: { p50: stats.firstTokenMs.p50, p95: stats.firstTokenMs.p95, mean5m: stats.firstTokenMs.mean },
    errorRate: stats.successRate === null ? 0 : Math.round((1 - stats.successRate) * 1000) / 1000,
    requests: stats.requests,
    drained: state.drained,
    forcedPrimary,
    weights,
    canary: config.canaries === null ? null : state.canary.snapshot(),
  };
}

type Scorer = (target: TargetConfig, policy: RoutingPolicy) => number;

/** A decision (or the explanation of a failed one) with every eligible candidate's live score. */
export function explainDecision(
  decision: RoutingDecision | RoutingExplanation,
  byName: ReadonlyMap<string, TargetConfig>,
  score: Scorer,
  error?: string,
): DecisionExplanation {
  const chosen = 'target' in decision ? decision.target.name : null;
  const rule = 'rule' in decision ? (decision as RoutingDecision).rule : '';
  return {
    rule,
    policy: decision.policy,
    matchedRules: decision.matchedRules,
    ...(decision.split === undefined ? {} : { split: decision.split }),
    chosen,
    candidates: decision.candidates.map((candidate) => {
      const target = byName.get(candidate.target);
      return {
        target: candidate.target,
        rule: candidate.rule,
        eligible: candidate.eligible,
        ...(candidate.reason === undefined ? {} : { reason: candidate.reason }),
        ...(target !== undefined ? { score: score(target, decision.policy) } : {}),
      };
    }),
    ...(error === undefined ? {} : { error }),
  };
}
