import type { RequestMeta } from '@switchyard/contracts';
import type { CompiledRouterConfig, CompiledRule } from '../config/compile-router-config';
import type { RoutingPolicy, TargetConfig } from '../config/router-config.schema';
import { DROP_REASONS, sensitiveRequiresLocal, type CandidateFilter } from './candidate-filter';
import { conditionMatches } from './rule-matcher';
import { NoEligibleTargetError } from './no-eligible-target.error';
import { ANY_ELIGIBLE_RULE, FORCED_PRIMARY_RULE, type CandidateRecord, type RoutingDecision, type SplitExplanation } from './routing-decision';
import { effectiveShares, randomSplitOrder, stickySplitOrder } from './weighted-split';

export interface DecideOptions {
  /** Targets the caller will not use for this call, e.g. one that just failed. */
  excludeTargets?: ReadonlySet<string> | readonly string[];
  /** Run in order after the hard constraint and the exclusion list. */
  filters?: readonly CandidateFilter[];
  /**
   * The operator's manual switch: this target is tried before any rule, and taken when it
   * passes every check a rule's target must pass — the hard constraint included.
   */
  forcedPrimary?: string;
  /** Orders the policy step by live score (higher first) instead of the static order. */
  score?: (target: TargetConfig, policy: RoutingPolicy) => number;
  /** A weighted split keeps every call with this key on one target (the job id); a random draw without it. */
  stickyKey?: string;
  /** [0, 1), for the draw of a call without a sticky key. Default Math.random. */
  random?: () => number;
  /** The weights of a split now (dynamic weights); its configured weights unless given. */
  weightsOf?: (rule: CompiledRule) => readonly number[];
}

const NO_FILTERS: readonly CandidateFilter[] = [];
const ELIGIBLE = null;
const NOT_YET_JUDGED = undefined;

/** The policy that orders the fallback step: high priority buys quality (SPEC §3, "Priority"). */
export function policyFor(config: CompiledRouterConfig, meta: RequestMeta): RoutingPolicy {
  return meta.priority === 'high' ? 'quality_first' : config.config.default_policy;
}

/**
 * Picks the target for one call. Pure: the same config, meta and options give the same
 * decision. Throws `NoEligibleTargetError` with the full explanation when nothing is left.
 */
export function decideRoute(config: CompiledRouterConfig, meta: RequestMeta, options: DecideOptions = {}): RoutingDecision {
  const { targets } = config;
  const excluded = options.excludeTargets;
  const filters = options.filters ?? NO_FILTERS;
  const policy = policyFor(config, meta);
  // Per target: undefined = not judged yet, null = eligible, string = drop reason.
  const verdicts: (string | null | undefined)[] = new Array<string | null | undefined>(targets.length);
  const candidates: CandidateRecord[] = [];
  const matchedRules: string[] = [];
  let chosen: TargetConfig | undefined;
  let chosenRule = ANY_ELIGIBLE_RULE;
  let split: SplitExplanation | undefined;

  const judge = (index: number): string | null => {
    const known = verdicts[index];
    if (known !== NOT_YET_JUDGED) return known;
    const verdict = dropReason(targets[index]!, meta, excluded, filters);
    verdicts[index] = verdict;
    return verdict;
  };

  if (options.forcedPrimary !== undefined) {
    const index = config.targets.findIndex((target) => target.name === options.forcedPrimary);
    if (index >= 0) {
      const reason = judge(index);
      candidates.push({ target: targets[index]!.name, rule: FORCED_PRIMARY_RULE, eligible: reason === ELIGIBLE, reason: reason ?? undefined });
      if (reason === ELIGIBLE) {
        chosen = targets[index];
        chosenRule = FORCED_PRIMARY_RULE;
      }
    }
  }

  for (const rule of config.rules) {
    if (!conditionMatches(rule.condition, meta)) continue;
    matchedRules.push(rule.name);
    if (chosen !== undefined) continue;
    let order = rule.targets;
    if (rule.weights !== undefined) {
      const weights = options.weightsOf?.(rule) ?? rule.weights;
      order = splitOrder(config, rule, weights, options).map((position) => rule.targets[position]!);
      split ??= explainSplit(config, rule, weights, options.stickyKey !== undefined, judge);
    }
    for (const index of order) {
      const reason = judge(index);
      candidates.push({ target: targets[index]!.name, rule: rule.name, eligible: reason === ELIGIBLE, reason: reason ?? undefined });
      if (reason === ELIGIBLE) {
        chosen = targets[index];
        chosenRule = rule.name;
        break;
      }
    }
  }

  if (chosen === undefined && config.config.fallback_to_any_eligible && options.score !== undefined) {
    chosen = bestScored(config, meta, policy, options.score, verdicts, judge, candidates);
  } else if (chosen === undefined && config.config.fallback_to_any_eligible) {
    for (const index of config.fallbackOrder[policy]) {
      // Already judged means already listed under a matching rule, and dropped there.
      if (verdicts[index] !== NOT_YET_JUDGED) continue;
      const reason = judge(index);
      candidates.push({ target: targets[index]!.name, rule: ANY_ELIGIBLE_RULE, eligible: reason === ELIGIBLE, reason: reason ?? undefined });
      if (reason === ELIGIBLE) {
        chosen = targets[index];
        break;
      }
    }
  }

  if (chosen === undefined) throw new NoEligibleTargetError({ policy, candidates, matchedRules, ...(split === undefined ? {} : { split }) }, meta);
  return { target: chosen, rule: chosenRule, policy, candidates, matchedRules, ...(split === undefined ? {} : { split }) };
}

function splitOrder(config: CompiledRouterConfig, rule: CompiledRule, weights: readonly number[], options: DecideOptions): number[] {
  if (options.stickyKey === undefined) return randomSplitOrder(weights, options.random ?? Math.random);
  return stickySplitOrder(weights, rule.targets.map((index) => config.targets[index]!.name), options.stickyKey);
}

/** Every target of the split judged, with its share once the dropped ones' weight is shared among the rest. */
function explainSplit(config: CompiledRouterConfig, rule: CompiledRule, weights: readonly number[], sticky: boolean, judge: (index: number) => string | null): SplitExplanation {
  const reasons = rule.targets.map((index) => judge(index));
  const shares = effectiveShares(
    weights,
    reasons.map((reason) => reason === ELIGIBLE),
  );
  return {
    rule: rule.name,
    sticky,
    targets: rule.targets.map((index, position) => {
      const reason = reasons[position];
      return { target: config.targets[index]!.name, weight: weights[position]!, share: shares[position]!, eligible: reason === ELIGIBLE, ...(reason ? { reason } : {}) };
    }),
  };
}

/** The policy step with live scores: every not-yet-judged target is judged, the best eligible one wins. */
function bestScored(
  config: CompiledRouterConfig,
  meta: RequestMeta,
  policy: RoutingPolicy,
  score: NonNullable<DecideOptions['score']>,
  verdicts: readonly (string | null | undefined)[],
  judge: (index: number) => string | null,
  candidates: CandidateRecord[],
): TargetConfig | undefined {
  let best: TargetConfig | undefined;
  let bestScore = Number.NEGATIVE_INFINITY;
  for (const index of config.fallbackOrder[policy]) {
    if (verdicts[index] !== NOT_YET_JUDGED) continue;
    const target = config.targets[index]!;
    const reason = judge(index);
    if (reason !== ELIGIBLE) {
      candidates.push({ target: target.name, rule: ANY_ELIGIBLE_RULE, eligible: false, reason });
      continue;
    }
    const value = score(target, policy);
    candidates.push({ target: target.name, rule: ANY_ELIGIBLE_RULE, eligible: true });
    // Ties keep the static policy order.
    if (value > bestScore) {
      best = target;
      bestScore = value;
    }
  }
  return best;
}

function dropReason(
  target: TargetConfig,
  meta: RequestMeta,
  excluded: DecideOptions['excludeTargets'],
  filters: readonly CandidateFilter[],
): string | null {
  // The hard constraint comes first so that no exclusion or filter can hide it in an explanation.
  const sensitive = sensitiveRequiresLocal(target, meta);
  if (sensitive !== null) return sensitive.reason;
  if (excluded !== undefined && isExcluded(excluded, target.name)) return DROP_REASONS.excluded;
  for (const filter of filters) {
    const drop = filter(target, meta);
    if (drop !== null) return drop.reason;
  }
  return ELIGIBLE;
}

function isExcluded(excluded: ReadonlySet<string> | readonly string[], name: string): boolean {
  return isList(excluded) ? excluded.includes(name) : excluded.has(name);
}

function isList(value: ReadonlySet<string> | readonly string[]): value is readonly string[] {
  return Array.isArray(value);
}
