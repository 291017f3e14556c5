import type { TokenUsage } from '../calls/cost';
import type { ProviderChoice, ToolCall } from './chat-provider';

/** A tool-call fragment of a streamed chunk: the first carries id and name, the rest more arguments. */
export interface ToolCallPart {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

/** The part of an OpenAI `chat.completion.chunk` the router reads. */
export interface CompletionChunk {
  model?: string;
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  choices?: readonly { index?: number; finish_reason?: string | null; delta?: { content?: string | null; tool_calls?: readonly ToolCallPart[] | null } | null }[];
}

interface ChoiceAccumulator {
  content: string;
  toolCalls: ToolCall[];
  finishReason: string | undefined;
}

/**
 * Builds the finished choices of a streamed completion from its chunks (content pieces,
 * tool-call fragments, finish reasons, the usage chunk), one chunk at a time.
 */
export class ChoiceAssembler {
  model = '';
  usage: TokenUsage | undefined;
  /** Some chunk carried a choice (a stream without any is not an answer). */
  sawChoice = false;
  private readonly choices = new Map<number, ChoiceAccumulator>();

  /** Adds one chunk; true when it carried a token (content or a tool-call fragment). */
  add(chunk: CompletionChunk): boolean {
    if (this.model === '' && chunk.model) this.model = chunk.model;
    if (chunk.usage) this.usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
    let token = false;
    for (const choice of chunk.choices ?? []) {
      this.sawChoice = true;
      const index = choice.index ?? 0;
      let acc = this.choices.get(index);
      if (acc === undefined) {
        acc = { content: '', toolCalls: [], finishReason: undefined };
        this.choices.set(index, acc);
      }
      if (choice.finish_reason) acc.finishReason = choice.finish_reason;
      const piece = choice.delta?.content;
      const toolParts = choice.delta?.tool_calls;
      if (typeof piece === 'string' && piece !== '') {
        acc.content += piece;
        token = true;
      }
      if (Array.isArray(toolParts) && toolParts.length > 0) {
        for (const part of toolParts) mergeToolCall(acc.toolCalls, part);
        token = true;
      }
    }
    return token;
  }

  /** The finished choices by index; a choice without a finish reason stopped (or called tools). */
  finished(): ProviderChoice[] {
    return [...this.choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, acc]) => ({
        index,
        content: acc.content,
        ...(acc.toolCalls.length > 0 ? { toolCalls: acc.toolCalls } : {}),
        finishReason: acc.finishReason ?? (acc.toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      }));
  }
}

function mergeToolCall(calls: ToolCall[], part: ToolCallPart): void {
  const index = part.index ?? calls.length;
  const call = (calls[index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
  if (part.id) call.id = part.id;
  if (part.function?.name) call.function.name += part.function.name;
  if (part.function?.arguments) call.function.arguments += part.function.arguments;
}
