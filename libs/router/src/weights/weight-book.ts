import type { CompiledRouterConfig, CompiledRule } from '../config/compile-router-config';
import type { DynamicWeightsConfig } from '../config/router-config.schema';
import { scoreTargets, stepSplitWeights, type SplitWeights, type TargetPerformance, type TargetScore, type WeightSettings } from './dynamic-weights';

/** One weight change, for the decision log and the admin view. */
export interface WeightChangeEntry {
  rule: string;
  target: string;
  from: number;
  to: number;
  desired: number;
  score: TargetScore;
  at: number;
}

/** A target's place in one split, for `/admin/targets`. */
export interface TargetWeightView {
  rule: string;
  configured: number;
  current: number;
  changedAt: number | null;
}

export function weightSettings(config: DynamicWeightsConfig): WeightSettings {
  return {
    maxStepPoints: config.max_step_points,
    minChangeIntervalMs: config.min_change_interval_s * 1000,
    minRequests: config.min_requests,
    latencyPenalty: config.latency_penalty,
    costPenalty: config.cost_penalty,
    minPoints: 1,
  };
}

/**
 * The weights of every weighted split as they stand in this process: the configured ones
 * until dynamic weights move them. A reload keeps a split's weights when its rule still
 * has the same targets and configured weights, and starts over from the file otherwise.
 */
export class WeightBook {
  private splits = new Map<string, { targets: readonly string[]; weights: SplitWeights }>();

  constructor(config: CompiledRouterConfig) {
    this.reload(config);
  }

  reload(config: CompiledRouterConfig): void {
    const next = new Map<string, { targets: readonly string[]; weights: SplitWeights }>();
    for (const rule of config.rules) {
      if (rule.weights === undefined) continue;
      const targets = rule.targets.map((index) => config.targets[index]!.name);
      const existing = this.splits.get(rule.name);
      const same = existing !== undefined && sameList(existing.targets, targets) && sameList(existing.weights.configured, rule.weights);
      next.set(rule.name, same ? existing : { targets, weights: { configured: rule.weights, current: rule.weights, changedAt: rule.weights.map(() => null) } });
    }
    this.splits = next;
  }

  /** The split's weights now (its configured ones for a rule the book does not know). */
  readonly weightsOf = (rule: CompiledRule): readonly number[] => this.splits.get(rule.name)?.weights.current ?? rule.weights ?? [];

  /** Every split `target` is part of. */
  viewOf(target: string): TargetWeightView[] {
    const views: TargetWeightView[] = [];
    for (const [rule, split] of this.splits) {
      const position = split.targets.indexOf(target);
      if (position < 0) continue;
      views.push({ rule, configured: split.weights.configured[position]!, current: split.weights.current[position]!, changedAt: split.weights.changedAt[position] ?? null });
    }
    return views;
  }

  /** One rebalancing round over every split, from each target's performance now. */
  rebalance(performanceOf: (target: string) => TargetPerformance, config: DynamicWeightsConfig, now: number): WeightChangeEntry[] {
    const settings = weightSettings(config);
    const changes: WeightChangeEntry[] = [];
    for (const [rule, split] of this.splits) {
      const scores = scoreTargets(split.targets.map(performanceOf), settings);
      const { next, changes: moved } = stepSplitWeights(split.weights, scores, settings, now);
      if (moved.length === 0) continue;
      this.splits.set(rule, { targets: split.targets, weights: next });
      for (const change of moved) changes.push({ rule, target: split.targets[change.position]!, from: change.from, to: change.to, desired: change.desired, score: change.score, at: now });
    }
    return changes;
  }
}

function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((value, index) => value === b[index]);
}
