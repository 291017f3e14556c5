import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

/** Tokens a chat format adds per message (role markers, separators). */
const PER_MESSAGE_OVERHEAD = 4;

/**
 * Input size in tokens, counted with the o200k_base BPE (the GPT-4o family's). Other
 * models' tokenizers differ by some percent; the context guard keeps 20 % headroom for that.
 */
export function estimateTokens(messages: readonly { content: string }[]): number {
  let tokens = 0;
  for (const message of messages) tokens += countTokens(message.content) + PER_MESSAGE_OVERHEAD;
  return tokens;
}

/** Output tokens of a reply, when the upstream reported none. */
export function countTextTokens(text: string): number {
  return countTokens(text);
}
