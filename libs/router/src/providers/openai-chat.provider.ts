import OpenAI from 'openai';
import type { TargetConfig } from '../config/router-config.schema';
import type { ChatCompletionCreateParamsStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { readUpstreamQuota } from '../quota/upstream-quota';
import type { ChatMessage, ChatProvider, ProviderCall, ProviderChoice, ProviderResult, ToolCall } from './chat-provider';
import { createUpstreamFetch, notifyWhenConnected, type UpstreamFetch, type UpstreamFetchOptions } from './upstream-fetch';

/** The upstream answered 2xx but not with a usable completion. */
export class MalformedCompletionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedCompletionError';
  }
}

/** Headroom that keeps the SDK's own timeout from ever firing before the router's. */
const SDK_TIMEOUT_SLACK_MS = 1_000;

/**
 * An OpenAI-compatible `/chat/completions` endpoint (vLLM, the OpenAI API, the simulator).
 * Always streams, so the router sees when the connection is up and when the first token arrives.
 */
export class OpenAiChatProvider implements ChatProvider {
  private readonly client: OpenAI;
  private readonly upstream: UpstreamFetch;

  constructor(
    readonly target: TargetConfig,
    apiKey: string,
    connection: UpstreamFetchOptions = {},
  ) {
    this.upstream = createUpstreamFetch(connection);
    this.client = new OpenAI({
      baseURL: target.endpoint,
      apiKey,
      fetch: this.upstream.fetch,
      // Explicit nulls stop the SDK from filling these in from OPENAI_* environment variables.
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      // The router owns retries and deadlines; the SDK must not stack its own on top.
      maxRetries: 0,
      timeout: target.timeout_ms + SDK_TIMEOUT_SLACK_MS,
      logLevel: 'off',
    });
  }

  close(): Promise<void> {
    return this.upstream.close();
  }

  async complete(call: ProviderCall): Promise<ProviderResult> {
    const started = performance.now();
    const responseFormat = call.responseFormat ?? (call.jsonMode ? { type: 'json_object' as const } : undefined);
    const body = {
      ...call.upstreamParams,
      model: this.target.model,
      messages: call.messages.map(toUpstreamMessage),
      stream: true,
      stream_options: { include_usage: true },
      ...(call.maxTokens === undefined ? {} : { max_tokens: call.maxTokens }),
      ...(call.temperature === undefined ? {} : { temperature: call.temperature }),
      ...(responseFormat === undefined ? {} : { response_format: responseFormat }),
    } as ChatCompletionCreateParamsStreaming;
    const { data: stream, response } = await this.client.chat.completions
      .create(body, {
        signal: call.signal,
        timeout: call.timeoutMs + SDK_TIMEOUT_SLACK_MS,
        maxRetries: 0,
        ...(call.headers === undefined ? {} : { headers: { ...call.headers } }),
        ...(call.onConnected === undefined ? {} : { fetchOptions: notifyWhenConnected(call.onConnected) }),
      })
      .withResponse();
    const quota = readUpstreamQuota((name) => response.headers.get(name));
    const choices = new Map<number, ChoiceAccumulator>();
    let sawChoice = false;
    let model = '';
    let firstTokenMs: number | undefined;
    let usage: ProviderResult['usage'];
    for await (const chunk of stream) {
      if (model === '' && chunk.model) model = chunk.model;
      if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
      for (const choice of chunk.choices) {
        sawChoice = true;
        const index = choice.index ?? 0;
        const acc = choices.get(index) ?? { content: '', toolCalls: [], finishReason: undefined };
        choices.set(index, acc);
        if (choice.finish_reason) acc.finishReason = choice.finish_reason;
        const piece = choice.delta?.content;
        const toolParts = choice.delta?.tool_calls;
        const hasPiece = typeof piece === 'string' && piece !== '';
        const hasTools = Array.isArray(toolParts) && toolParts.length > 0;
        if (!hasPiece && !hasTools) continue;
        if (firstTokenMs === undefined) {
          firstTokenMs = Math.round(performance.now() - started);
          call.onFirstToken?.();
        }
        if (hasPiece) {
          acc.content += piece;
          if (index === 0) call.onDelta?.(piece);
        }
        if (hasTools) for (const part of toolParts) mergeToolCall(acc.toolCalls, part);
        call.onChoiceDelta?.({ index, delta: { ...(hasPiece ? { content: piece } : {}), ...(hasTools ? { tool_calls: toolParts } : {}) } });
      }
    }
    // The SDK ends an aborted stream quietly: what arrived before a deadline is not an answer.
    call.signal.throwIfAborted();
    if (!sawChoice) throw new MalformedCompletionError('the stream carried no choices');
    const finished: ProviderChoice[] = [...choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, acc]) => ({
        index,
        content: acc.content,
        ...(acc.toolCalls.length > 0 ? { toolCalls: acc.toolCalls } : {}),
        finishReason: acc.finishReason ?? (acc.toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      }));
    const first = finished[0]!;
    return {
      content: first.content,
      model: model || this.target.model,
      finishReason: first.finishReason,
      ...(first.toolCalls ? { toolCalls: first.toolCalls } : {}),
      choices: finished,
      ...(usage ? { usage } : {}),
      ...(firstTokenMs === undefined ? {} : { firstTokenMs }),
      ...(quota === undefined ? {} : { quota }),
    };
  }
}

interface ChoiceAccumulator {
  content: string;
  toolCalls: ToolCall[];
  finishReason: string | undefined;
}

/** Tool calls stream as fragments keyed by `index`: the first carries id and name, the rest more arguments. */
function mergeToolCall(calls: ToolCall[], part: { index?: number; id?: string; type?: string; function?: { name?: string; arguments?: string } }): void {
  const index = part.index ?? calls.length;
  const call = (calls[index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
  if (part.id) call.id = part.id;
  if (part.function?.name) call.function.name += part.function.name;
  if (part.function?.arguments) call.function.arguments += part.function.arguments;
}

/** Our message → OpenAI's: an assistant turn that only calls tools has `content: null`. */
export function toUpstreamMessage(message: ChatMessage): ChatCompletionMessageParam {
  if (message.role === 'tool') return { role: 'tool', content: message.content, tool_call_id: message.tool_call_id ?? '' };
  if (message.role === 'assistant') {
    return {
      role: 'assistant',
      content: message.tool_calls && message.content === '' ? null : message.content,
      ...(message.tool_calls ? { tool_calls: message.tool_calls } : {}),
      ...(message.name ? { name: message.name } : {}),
    };
  }
  return { role: message.role, content: message.content, ...(message.name ? { name: message.name } : {}) };
}
