import OpenAI from 'openai';
import type { TargetConfig } from '../config/router-config.schema';
import type { ChatCompletionCreateParamsStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { readUpstreamQuota } from '../quota/upstream-quota';
import { ChoiceAssembler } from './choice-assembler';
import type { ChatMessage, ChatProvider, ProviderCall, ProviderResult } from './chat-provider';
import { MalformedCompletionError } from './malformed-completion.error';
import { passThroughCall, type PassThroughTarget } from './pass-through-call';
import { createUpstreamFetch, notifyWhenConnected, type UpstreamFetch, type UpstreamFetchOptions } from './upstream-fetch';

/** Headroom that keeps the SDK's own timeout from ever firing before the router's. */
const SDK_TIMEOUT_SLACK_MS = 1_000;

/**
 * An OpenAI-compatible `/chat/completions` endpoint (vLLM, the OpenAI API, the simulator).
 * Always streams, so the router sees when the connection is up and when the first token arrives.
 * Calls go through the official SDK, or, for the gateway's pass-through (`call.passThrough`),
 * straight onto the same connection pool with the same body.
 */
export class OpenAiChatProvider implements ChatProvider {
  private readonly client: OpenAI;
  private readonly upstream: UpstreamFetch;
  private readonly passThroughTarget: PassThroughTarget;

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
    this.passThroughTarget = {
      dispatcher: this.upstream.dispatcher,
      url: `${target.endpoint.replace(/\/+$/, '')}/chat/completions`,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${apiKey}` },
      model: target.model,
    };
  }

  close(): Promise<void> {
    return this.upstream.close();
  }

  complete(call: ProviderCall): Promise<ProviderResult> {
    const body = upstreamBody(this.target.model, call);
    return call.passThrough === undefined ? this.viaSdk(body, call) : passThroughCall(this.passThroughTarget, JSON.stringify(body), call, call.passThrough);
  }

  private async viaSdk(body: ChatCompletionCreateParamsStreaming, call: ProviderCall): Promise<ProviderResult> {
    const started = performance.now();
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
    const assembler = new ChoiceAssembler();
    let firstTokenMs: number | undefined;
    for await (const chunk of stream) {
      if (!assembler.add(chunk)) continue;
      if (firstTokenMs === undefined) {
        firstTokenMs = Math.round(performance.now() - started);
        call.onFirstToken?.();
      }
      if (call.onDelta !== undefined) {
        const piece = chunk.choices.find((choice) => (choice.index ?? 0) === 0)?.delta?.content;
        if (piece) call.onDelta(piece);
      }
    }
    // The SDK ends an aborted stream quietly: what arrived before a deadline is not an answer.
    call.signal.throwIfAborted();
    if (!assembler.sawChoice) throw new MalformedCompletionError('the stream carried no choices');
    const finished = assembler.finished();
    const first = finished[0]!;
    return {
      content: first.content,
      model: assembler.model || this.target.model,
      finishReason: first.finishReason,
      ...(first.toolCalls ? { toolCalls: first.toolCalls } : {}),
      choices: finished,
      ...(assembler.usage ? { usage: assembler.usage } : {}),
      ...(firstTokenMs === undefined ? {} : { firstTokenMs }),
      ...(quota === undefined ? {} : { quota }),
    };
  }
}

/** The request body both paths send: the router's fields win over the passed-through parameters. */
function upstreamBody(model: string, call: ProviderCall): ChatCompletionCreateParamsStreaming {
  const responseFormat = call.responseFormat ?? (call.jsonMode ? { type: 'json_object' as const } : undefined);
  return {
    ...call.upstreamParams,
    model,
    messages: call.messages.map(toUpstreamMessage),
    stream: true,
    stream_options: { include_usage: true },
    ...(call.maxTokens === undefined ? {} : { max_tokens: call.maxTokens }),
    ...(call.temperature === undefined ? {} : { temperature: call.temperature }),
    ...(responseFormat === undefined ? {} : { response_format: responseFormat }),
  } as ChatCompletionCreateParamsStreaming;
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
