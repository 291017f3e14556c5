import OpenAI from 'openai';
import type { TargetConfig } from '../config/router-config.schema';
import type { ChatProvider, ProviderCall, ProviderResult } from './chat-provider';

/** The upstream answered 2xx but not with a usable completion. */
export class MalformedCompletionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedCompletionError';
  }
}

/** An OpenAI-compatible `/chat/completions` endpoint (vLLM, the OpenAI API, the simulator). */
export class OpenAiChatProvider implements ChatProvider {
  private readonly client: OpenAI;

  constructor(
    readonly target: TargetConfig,
    apiKey: string,
  ) {
    this.client = new OpenAI({
      baseURL: target.endpoint,
      apiKey,
      // Explicit nulls stop the SDK from filling these in from OPENAI_* environment variables.
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      // The router owns retries and deadlines; the SDK must not stack its own on top.
      maxRetries: 0,
      timeout: target.timeout_ms,
      logLevel: 'off',
    });
  }

  // Non-streaming for now: streaming, for first-token timing, arrives with the full router.
  async complete(call: ProviderCall): Promise<ProviderResult> {
    const completion = await this.client.chat.completions.create(
      {
        model: this.target.model,
        messages: call.messages.map((message) => ({ role: message.role, content: message.content })),
        stream: false,
        ...(call.maxTokens === undefined ? {} : { max_tokens: call.maxTokens }),
        ...(call.temperature === undefined ? {} : { temperature: call.temperature }),
        ...(call.jsonMode ? { response_format: { type: 'json_object' as const } } : {}),
      },
      { signal: call.signal, timeout: call.timeoutMs, maxRetries: 0, ...(call.headers === undefined ? {} : { headers: { ...call.headers } }) },
    );
    const content = completion.choices[0]?.message.content;
    if (typeof content !== 'string') throw new MalformedCompletionError('the response carried no message content');
    return {
      content,
      model: completion.model || this.target.model,
      ...(completion.usage ? { usage: { inputTokens: completion.usage.prompt_tokens, outputTokens: completion.usage.completion_tokens } } : {}),
    };
  }
}
