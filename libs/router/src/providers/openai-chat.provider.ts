import OpenAI from 'openai';
import type { TargetConfig } from '../config/router-config.schema';
import type { ChatProvider, ProviderCall, ProviderResult } from './chat-provider';
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
    const stream = await this.client.chat.completions.create(
      {
        model: this.target.model,
        messages: call.messages.map((message) => ({ role: message.role, content: message.content })),
        stream: true,
        stream_options: { include_usage: true },
        ...(call.maxTokens === undefined ? {} : { max_tokens: call.maxTokens }),
        ...(call.temperature === undefined ? {} : { temperature: call.temperature }),
        ...(call.jsonMode ? { response_format: { type: 'json_object' as const } } : {}),
      },
      {
        signal: call.signal,
        timeout: call.timeoutMs + SDK_TIMEOUT_SLACK_MS,
        maxRetries: 0,
        ...(call.headers === undefined ? {} : { headers: { ...call.headers } }),
        ...(call.onConnected === undefined ? {} : { fetchOptions: notifyWhenConnected(call.onConnected) }),
      },
    );
    let content = '';
    let sawChoice = false;
    let model = '';
    let firstTokenMs: number | undefined;
    let usage: ProviderResult['usage'];
    for await (const chunk of stream) {
      if (model === '' && chunk.model) model = chunk.model;
      if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
      const choice = chunk.choices[0];
      if (choice === undefined) continue;
      sawChoice = true;
      const piece = choice.delta?.content;
      if (typeof piece !== 'string' || piece === '') continue;
      if (firstTokenMs === undefined) {
        firstTokenMs = Math.round(performance.now() - started);
        call.onFirstToken?.();
      }
      content += piece;
      call.onDelta?.(piece);
    }
    // The SDK ends an aborted stream quietly: what arrived before a deadline is not an answer.
    call.signal.throwIfAborted();
    if (!sawChoice) throw new MalformedCompletionError('the stream carried no choices');
    return {
      content,
      model: model || this.target.model,
      ...(usage ? { usage } : {}),
      ...(firstTokenMs === undefined ? {} : { firstTokenMs }),
    };
  }
}
