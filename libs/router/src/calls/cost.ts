import type { TargetConfig } from '../config/router-config.schema';

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export function costUsd(target: TargetConfig, usage: TokenUsage): number {
  const price = target.cost_per_1k_tokens;
  return (usage.inputTokens * price.input + usage.outputTokens * price.output) / 1000;
}
