export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
}

export interface ChatCompletion extends CompletionIdentity {
  object: 'chat.completion';
  choices: [{ index: 0; message: { role: 'assistant'; content: string }; finish_reason: 'stop'; logprobs: null }];
  usage: Usage;
}

export interface ChatCompletionChunk extends CompletionIdentity {
  object: 'chat.completion.chunk';
  choices: { index: 0; delta: { role?: 'assistant'; content?: string }; finish_reason: 'stop' | null; logprobs: null }[];
  usage?: Usage;
}

const STREAM_PIECES = 4;
export const SSE_DONE = 'data: [DONE]\n\n';

export function usageFor(promptTokens: number, completionTokens: number): Usage {
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

export function completionObject(identity: CompletionIdentity, content: string, usage: Usage): ChatCompletion {
  return {
    ...identity,
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
    usage,
  };
}

/** Splits into at most `maxPieces` contiguous, non-empty pieces that concatenate back to `text`. */
export function splitIntoPieces(text: string, maxPieces: number = STREAM_PIECES): string[] {
  if (text.length === 0) return [];
  const size = Math.ceil(text.length / Math.max(1, maxPieces));
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += size) pieces.push(text.slice(start, start + size));
  return pieces;
}

/**
 * The chunk sequence OpenAI sends: role first, then content pieces, then an empty delta with
 * `finish_reason`, then (only when asked for) a usage chunk with no choices.
 */
export function streamChunks(identity: CompletionIdentity, content: string, usage: Usage | null): ChatCompletionChunk[] {
  const chunk = (delta: ChatCompletionChunk['choices'][number]['delta'], finish: 'stop' | null): ChatCompletionChunk => ({
    ...identity,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  const chunks = [chunk({ role: 'assistant', content: '' }, null)];
  for (const piece of splitIntoPieces(content)) chunks.push(chunk({ content: piece }, null));
  chunks.push(chunk({}, 'stop'));
  if (usage) chunks.push({ ...identity, object: 'chat.completion.chunk', choices: [], usage });
  return chunks;
}

export function sseFrame(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}
