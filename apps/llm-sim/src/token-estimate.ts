/** About four characters per token for English text: plausible, deterministic counts are all a simulator needs. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}
