import type * as O200k from 'gpt-tokenizer/encoding/o200k_base';

/**
 * The o200k_base tokenizer, loaded on its first use: its rank tables take ~55 MB of a
 * process's memory, and a worker whose inputs all fit the context limits by their byte count
 * never needs them (see `estimateInputTokens`).
 */
let o200k: typeof O200k | undefined;
function countTokens(text: string): number {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load: `import` would load the tables at start.
  o200k ??= require('gpt-tokenizer/encoding/o200k_base') as typeof O200k;
  return o200k.countTokens(text);
}

/**
 * Loads the tokenizer now (about 180 ms here): for a process that counts exactly on its hot
 * path (the gateway counts every request), so its first request does not pay the load.
 */
export function preloadTokenizer(): void {
  countTokens('');
}

/** Whether the tokenizer has been loaded in this process (for the memory tests). */
export function tokenizerLoaded(): boolean {
  return o200k !== undefined;
}

/** Tokens a chat format adds per message (role markers, separators). */
const PER_MESSAGE_OVERHEAD = 4;

/** UTF-8 bytes per token in the approximation: near o200k for English prose (~4.2) and Chinese (~3–4). */
const BYTES_PER_TOKEN_APPROX = 4;

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
 * prose. Otherwise (an input near a context limit, a tpm quota) the input is counted exactly.
 * A short input is approximated too: counting it would cost little CPU, but it would load the
 * tokenizer's tables (~55 MB) into every worker.
 */
export function estimateInputTokens(messages: Messages, limits: TokenLimits): number {
  const { bytes, count } = sizeOf(messages);
  const overhead = count * PER_MESSAGE_OVERHEAD;
  if (limits.tokenQuota || bytes + overhead > limits.tightestContextTokens) return estimateTokens(messages);
  return Math.ceil(bytes / BYTES_PER_TOKEN_APPROX) + overhead;
}
