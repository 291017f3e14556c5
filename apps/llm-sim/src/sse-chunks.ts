import type { ReplyPlan, SimToolCall } from './reply-plan';

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

type FinishReason = ReplyPlan['finishReason'];

export interface ChatCompletion extends CompletionIdentity {
  object: 'chat.completion';
  choices: { index: number; message: { role: 'assistant'; content: string | null; tool_calls?: SimToolCall[] }; finish_reason: FinishReason; logprobs: null }[];
  usage: Usage;
}

interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function: { name?: string; arguments: string };
}

export interface ChatCompletionChunk extends CompletionIdentity {
  object: 'chat.completion.chunk';
  choices: { index: number; delta: { role?: 'assistant'; content?: string; tool_calls?: ToolCallDelta[] }; finish_reason: FinishReason | null; logprobs: null }[];
  usage?: Usage;
}

/** One choice per plan; plain text is one choice that stops. */
function plansOf(reply: string | readonly ReplyPlan[]): readonly ReplyPlan[] {
  return typeof reply === 'string' ? [{ content: reply, toolCalls: null, finishReason: 'stop' }] : reply;
}

const STREAM_PIECES = 4;
export const SSE_DONE = 'data: [DONE]\n\n';

export function usageFor(promptTokens: number, completionTokens: number): Usage {
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

export function completionObject(identity: CompletionIdentity, reply: string | readonly ReplyPlan[], usage: Usage): ChatCompletion {
  return {
    ...identity,
    object: 'chat.completion',
    choices: plansOf(reply).map((plan, index) => ({
      index,
      message: plan.toolCalls ? { role: 'assistant', content: null, tool_calls: plan.toolCalls } : { role: 'assistant', content: plan.content },
      finish_reason: plan.finishReason,
      logprobs: null,
    })),
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
export function streamChunks(identity: CompletionIdentity, reply: string | readonly ReplyPlan[], usage: Usage | null): ChatCompletionChunk[] {
  const chunk = (index: number, delta: ChatCompletionChunk['choices'][number]['delta'], finish: FinishReason | null): ChatCompletionChunk => ({
    ...identity,
    object: 'chat.completion.chunk',
    choices: [{ index, delta, finish_reason: finish, logprobs: null }],
  });
  const chunks: ChatCompletionChunk[] = [];
  plansOf(reply).forEach((plan, index) => {
    chunks.push(chunk(index, { role: 'assistant', content: '' }, null));
    for (const piece of splitIntoPieces(plan.content)) chunks.push(chunk(index, { content: piece }, null));
    plan.toolCalls?.forEach((call, callIndex) => {
      // As OpenAI streams them: id and name first, then the arguments in pieces.
      chunks.push(chunk(index, { tool_calls: [{ index: callIndex, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }, null));
      for (const piece of splitIntoPieces(call.function.arguments, 2)) chunks.push(chunk(index, { tool_calls: [{ index: callIndex, function: { arguments: piece } }] }, null));
    });
    chunks.push(chunk(index, {}, plan.finishReason));
  });
  if (usage) chunks.push({ ...identity, object: 'chat.completion.chunk', choices: [], usage });
  return chunks;
}

export function sseFrame(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}
