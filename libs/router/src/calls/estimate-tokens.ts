import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

/** Tokens a chat format adds per message (role markers, separators). */
const PER_MESSAGE_OVERHEAD = 4;

/** UTF-8 bytes per token in the approximation: near o200k for English prose (~4.2) and Chinese (~3–4). */
const BYTES_PER_TOKEN_APPROX = 4;

/** Inputs up to this size are counted exactly anyway: the tokenizer takes a few microseconds on them. */
const ALWAYS_COUNTED_BYTES = 1_024;

type Messages = readonly { content: string }[];

/**
 * Input size in tokens, counted with the o200k_base BPE (the GPT-4o family's). Other
 * models' tokenizers differ by some percent; the context guard keeps 20 % headroom for that.
 */
export function estimateTokens(messages: Messages): number {
  let tokens = 0;
  for (const message of messages) tokens += countTokens(message.content) + PER_MESSAGE_OVERHEAD;
  return tokens;
}

/** Output tokens of a reply, when the upstream reported none. */
export function countTextTokens(text: string): number {
  return countTokens(text);
}

/** UTF-8 bytes of every message's content, and the count of messages. */
function sizeOf(messages: Messages): { bytes: number; count: number } {
  let bytes = 0;
  for (const message of messages) bytes += Buffer.byteLength(message.content, 'utf8');
  return { bytes, count: messages.length };
}

/** What a call's input-token figure must settle: the tightest context limit, and whether a quota counts tokens. */
export interface TokenLimits {
  /** The smallest `context_window × context_max_share` of any target. */
  tightestContextTokens: number;
  /** Some target has a `tpm` quota, which is charged with the figure. */
  tokenQuota: boolean;
}

/**
 * A call's input size for routing, without tokenizing when nothing depends on the exact
 * count. Every BPE token encodes at least one byte, so the UTF-8 byte count bounds the o200k
 * count from above: when that bound fits the tightest context limit and no target charges
 * tokens to a quota, every limit decides as it would with the exact count, and the figure is
 * only the estimated input of an attempt's ledger row (its cost, should the attempt never
 * report usage). It is then bytes ÷ 4, which is below the bound and near the exact count for
 * prose. Otherwise (an input near a context limit, a tpm quota) the input is counted exactly,
 * and so is a short one (up to 1 KiB), where counting costs next to nothing.
 */
export function estimateInputTokens(messages: Messages, limits: TokenLimits): number {
  const { bytes, count } = sizeOf(messages);
  const overhead = count * PER_MESSAGE_OVERHEAD;
  if (limits.tokenQuota || bytes <= ALWAYS_COUNTED_BYTES || bytes + overhead > limits.tightestContextTokens) return estimateTokens(messages);
  return Math.ceil(bytes / BYTES_PER_TOKEN_APPROX) + overhead;
}
