import { compileCondition, type CompiledCondition } from '../routing/rule-matcher';
import type { RouterConfig, RoutingPolicy, TargetConfig } from './router-config.schema';

export interface CompiledRule {
  readonly name: string;
  readonly priority: number;
  readonly condition: CompiledCondition;
  /** Indexes into `CompiledRouterConfig.targets`, in the rule's order. */
  readonly targets: readonly number[];
  /** A weighted split: the configured weight of each of `targets`. */
  readonly weights?: readonly number[];
}

/**
 * A validated config prepared for the hot path: rules sorted once, conditions turned into
 * set lookups, targets addressed by index, and the fallback order of each policy computed.
 */
export interface CompiledRouterConfig {
  readonly source: string;
  readonly config: RouterConfig;
  readonly targets: readonly TargetConfig[];
  readonly targetsByName: ReadonlyMap<string, TargetConfig>;
  /** Highest priority first; equal priorities keep config order. */
  readonly rules: readonly CompiledRule[];
  readonly fallbackOrder: Readonly<Record<RoutingPolicy, readonly number[]>>;
  /** Legal but probably unintended settings, for the operator to see at startup. */
  readonly warnings: readonly string[];
}

export function compileRouterConfig(config: RouterConfig, source = '(inline)'): CompiledRouterConfig {
  const indexByName = new Map(config.targets.map((target, index) => [target.name, index]));
  const rules = config.routes
    .map(
      (rule): CompiledRule => ({
        name: rule.name,
        priority: rule.priority,
        condition: compileCondition(rule.when),
        targets: rule.targets.map((name) => {
          const index = indexByName.get(name);
          if (index === undefined) throw new Error(`route "${rule.name}" names unknown target "${name}"`);
          return index;
        }),
        ...(rule.weights === undefined ? {} : { weights: rule.weights }),
      }),
    )
    // Array.prototype.sort is stable, so equal priorities keep config order.
    .sort((a, b) => b.priority - a.priority);

  return {
    source,
    config,
    targets: config.targets,
    targetsByName: new Map(config.targets.map((target) => [target.name, target])),
    rules,
    fallbackOrder: {
      local_first: orderLocalFirst(config.targets),
      quality_first: orderQualityFirst(config.targets),
      // No latency data exists until health tracking arrives; until then local is the fast path.
      latency_first: orderLocalFirst(config.targets),
    },
    warnings: configWarnings(config, rules),
  };
}

function orderLocalFirst(targets: readonly TargetConfig[]): number[] {
  const price = (target: TargetConfig) => target.cost_per_1k_tokens.input + target.cost_per_1k_tokens.output;
  return targets
    .map((_, index) => index)
    .sort((a, b) => {
      const ta = targets[a]!;
      const tb = targets[b]!;
      if (ta.type !== tb.type) return ta.type === 'local' ? -1 : 1;
      return price(ta) - price(tb);
    });
}

function orderQualityFirst(targets: readonly TargetConfig[]): number[] {
  return targets.map((_, index) => index).sort((a, b) => targets[b]!.quality - targets[a]!.quality);
}

function configWarnings(config: RouterConfig, rules: readonly CompiledRule[]): string[] {
  const warnings: string[] = [];
  if (!config.targets.some((target) => target.type === 'local')) {
    warnings.push('no local target: sensitive requests can never be served');
  }
  for (const rule of config.routes) {
    const sensitivity = rule.when.sensitivity;
    const onlySensitive = sensitivity !== undefined && sensitivity.every((value) => value === 'sensitive');
    const allCloud = rule.targets.every((name) => config.targets.find((target) => target.name === name)?.type === 'cloud');
    if (onlySensitive && allCloud) {
      warnings.push(`route "${rule.name}" matches only sensitive requests but names only cloud targets; sensitive requests never leave local targets, so it can never be used`);
    }
  }
  const catchAll = rules.find((rule) => rule.condition.catchAll);
  const shadowed = catchAll ? rules.filter((rule) => !rule.condition.catchAll && rule.priority < catchAll.priority) : [];
  if (catchAll && shadowed.length > 0) {
    warnings.push(
      `catch-all route "${catchAll.name}" (priority ${catchAll.priority}) outranks ${shadowed.map((rule) => `"${rule.name}"`).join(', ')}; they are tried only when its targets are all unavailable`,
    );
  }
  return warnings;
}
