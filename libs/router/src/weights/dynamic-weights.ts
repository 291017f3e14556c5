/**
 * Dynamic weights (seed 004 §3.3): a score per target from its success rate, latency and cost,
 * and a step that moves each weight of a split toward its configured weight scaled by that
 * score — by at most `maxStepPoints` points (of the split's configured total) per move, at most
 * once per `minChangeIntervalMs` per weight, never below `minPoints` (a target kept at a trickle
 * still shows whether it got better). Pure: the caller passes the clock's `now`.
 */

export interface WeightSettings {
  maxStepPoints: number;
  minChangeIntervalMs: number;
  /** Fewer calls than this in the window: the score is unknown and the weight stays. */
  minRequests: number;
  latencyPenalty: number;
  costPenalty: number;
  /** The lowest a positive configured weight is moved to, in points. */
  minPoints: number;
}

/** What the passive window says about one target of a split. */
export interface TargetPerformance {
  requests: number;
  successRate: number | null;
  latencyP50Ms: number | null;
  /** USD per 1k input + 1k output tokens. */
  price: number;
}

export interface TargetScore {
  score: number | null;
  successRate: number | null;
  latencyP50Ms: number | null;
  price: number;
}

/** A split's weights: as configured, as they stand, and when each last moved. */
export interface SplitWeights {
  readonly configured: readonly number[];
  readonly current: readonly number[];
  readonly changedAt: readonly (number | null)[];
}

export interface WeightChange {
  position: number;
  from: number;
  to: number;
  /** Where the score would put it; `to` is bounded by the step. */
  desired: number;
  score: TargetScore;
}

/** How far `value` is behind the best: 0 for the best, toward 1 for much worse. */
function behind(value: number | null, best: number | null): number {
  if (value === null || best === null || value <= 0) return 0;
  return Math.max(0, (value - best) / value);
}

/** 0..100: the success rate in points, less the latency and cost penalties relative to the split's best; null below `minRequests`. */
export function scoreTargets(performances: readonly TargetPerformance[], settings: WeightSettings): TargetScore[] {
  const known = performances.filter((p) => p.requests >= settings.minRequests && p.successRate !== null);
  const latencies = known.map((p) => p.latencyP50Ms).filter((ms): ms is number => ms !== null);
  const bestLatency = latencies.length === 0 ? null : Math.min(...latencies);
  const bestPrice = known.length === 0 ? null : Math.min(...known.map((p) => p.price));
  return performances.map((p) => {
    const base = { successRate: p.successRate, latencyP50Ms: p.latencyP50Ms, price: p.price };
    if (p.requests < settings.minRequests || p.successRate === null) return { ...base, score: null };
    const raw = 100 * p.successRate - settings.latencyPenalty * behind(p.latencyP50Ms, bestLatency) - settings.costPenalty * behind(p.price, bestPrice);
    return { ...base, score: Math.round(Math.min(100, Math.max(0, raw)) * 10) / 10 };
  });
}

const round3 = (value: number) => Math.round(value * 1000) / 1000;

/**
 * One step for one split. Targets with an unknown score keep their weight and take no part:
 * the weight the known ones hold together is shared among them by configured weight × score.
 */
export function stepSplitWeights(split: SplitWeights, scores: readonly TargetScore[], settings: WeightSettings, now: number): { next: SplitWeights; changes: WeightChange[] } {
  const configuredTotal = split.configured.reduce((sum, w) => sum + w, 0);
  const point = configuredTotal / 100;
  const known = scores.map((s, position) => s.score !== null && split.configured[position]! > 0);
  const mass = split.current.reduce((sum, w, position) => (known[position] ? sum + w : sum), 0);
  const targets = desiredWeights(split.configured, scores, known, mass, settings.minPoints * point);
  if (targets === null) return { next: split, changes: [] };
  const current = [...split.current];
  const changedAt = [...split.changedAt];
  const changes: WeightChange[] = [];
  split.configured.forEach((_, position) => {
    if (!known[position]) return;
    const last = changedAt[position];
    if (last !== null && last !== undefined && now - last < settings.minChangeIntervalMs) return;
    const desired = round3(targets[position]!);
    const from = current[position]!;
    const maxStep = settings.maxStepPoints * point;
    const to = Math.abs(desired - from) <= maxStep ? desired : from + Math.sign(desired - from) * maxStep;
    // Less than half a point is noise, not a change worth a log line.
    if (Math.abs(to - from) < point / 2) return;
    current[position] = to;
    changedAt[position] = now;
    changes.push({ position, from, to, desired, score: scores[position]! });
  });
  return { next: changes.length === 0 ? split : { configured: split.configured, current, changedAt }, changes };
}

/**
 * Where each known weight should be: the `mass` the known targets hold together, shared by
 * configured weight × score, with `floor` as the least any of them gets (what the floored ones
 * take comes out of the others' shares, so the total stays `mass`). Null when nothing can be said.
 */
function desiredWeights(configured: readonly number[], scores: readonly TargetScore[], known: readonly boolean[], mass: number, floor: number): number[] | null {
  const merit = (position: number) => configured[position]! * scores[position]!.score!;
  const floored = new Set<number>();
  for (;;) {
    const free = known.map((isKnown, position) => isKnown && !floored.has(position));
    const totalMerit = free.reduce((sum, isFree, position) => (isFree ? sum + merit(position) : sum), 0);
    const share = mass - floored.size * floor;
    if (totalMerit <= 0 || share <= 0) return null;
    const desired = known.map((isKnown, position) => (!isKnown ? 0 : floored.has(position) ? floor : (share * merit(position)) / totalMerit));
    const under = desired.findIndex((weight, position) => free[position] && weight < floor);
    if (under < 0) return desired;
    floored.add(under);
  }
}
