import type { RoutingPolicy, TargetConfig } from '../config/router-config.schema';

export interface ScoreInputs {
  /** 0..100 */
  health: number;
  /** p50 first-token latency from the passive window; null before any traffic. */
  firstTokenP50Ms: number | null;
}

interface Weights {
  capability: number;
  health: number;
  latency: number;
  cost: number;
}

/** What each policy values (SPEC §3.4). Every feature is normalised to 0..1 first. */
export const POLICY_WEIGHTS: Readonly<Record<RoutingPolicy, Weights>> = {
  local_first: { capability: 0.15, health: 0.25, latency: 0.2, cost: 0.4 },
  quality_first: { capability: 0.6, health: 0.25, latency: 0.05, cost: 0.1 },
  latency_first: { capability: 0.1, health: 0.25, latency: 0.55, cost: 0.1 },
};

/** A target's weighted score 0..100 under a policy. Higher is better. */
export function scoreTarget(target: TargetConfig, policy: RoutingPolicy, inputs: ScoreInputs): number {
  const w = POLICY_WEIGHTS[policy];
  const capability = target.quality / 10;
  const health = inputs.health / 100;
  // Before any measurement, a local target is assumed nearer than a cloud one.
  const latency = inputs.firstTokenP50Ms === null ? (target.type === 'local' ? 0.7 : 0.5) : 1 / (1 + inputs.firstTokenP50Ms / 1000);
  const pricePer1k = target.cost_per_1k_tokens.input + target.cost_per_1k_tokens.output;
  const cost = 1 / (1 + pricePer1k * 100);
  const locality = policy === 'local_first' && target.type === 'local' ? 0.1 : 0;
  return Math.round((w.capability * capability + w.health * health + w.latency * latency + w.cost * cost + locality) * 1000) / 10;
}
