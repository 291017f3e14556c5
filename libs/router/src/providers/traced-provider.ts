import { inSpan, recordSpanError, SpanKind, withTraceHeaders } from '@switchyard/observability';
import { looksLikeJsonObject } from '../calls/bad-output';
import { costUsd } from '../calls/cost';
import { countTextTokens } from '../calls/estimate-tokens';
import { classifyUpstreamError } from '../calls/upstream-error';
import type { TargetConfig } from '../config/router-config.schema';
import type { ChatProvider, ProviderCall, ProviderResult } from './chat-provider';
import type { ProviderFactory } from './provider-registry';

/**
 * Every upstream attempt as a client span (target, model, outcome, error class, tokens, cost),
 * a child of whatever span makes the call, with `traceparent` sent upstream so a traced
 * upstream joins the same trace.
 */
export function tracedProviders(inner: ProviderFactory): ProviderFactory {
  return (target, apiKey) => new TracedChatProvider(inner(target, apiKey), target);
}

class TracedChatProvider implements ChatProvider {
  private readonly spanName: string;
  private readonly attributes: Readonly<Record<string, string>>;

  constructor(
    private readonly inner: ChatProvider,
    readonly target: TargetConfig,
  ) {
    this.spanName = `upstream ${target.name}`;
    this.attributes = { 'switchyard.target': target.name, 'switchyard.target_type': target.type, 'gen_ai.request.model': target.model };
  }

  complete(call: ProviderCall): Promise<ProviderResult> {
    const target = this.target;
    return inSpan(
      this.spanName,
      this.attributes,
      async (span) => {
        try {
          const result = await this.inner.complete({ ...call, headers: withTraceHeaders(call.headers) });
          // Without tracing the span records nothing: its attributes are not worth building.
          if (!span.isRecording()) return result;
          const expectsJson = call.jsonMode === true || call.responseFormat !== undefined;
          const usage = result.usage ?? { inputTokens: 0, outputTokens: countTextTokens(result.content) };
          span.setAttributes({
            'switchyard.outcome': expectsJson && !looksLikeJsonObject(result.content) ? 'bad_output' : 'ok',
            'gen_ai.response.model': result.model,
            'gen_ai.usage.input_tokens': usage.inputTokens,
            'gen_ai.usage.output_tokens': usage.outputTokens,
            'switchyard.cost_usd': costUsd(target, usage),
            ...(result.firstTokenMs === undefined ? {} : { 'switchyard.first_token_ms': result.firstTokenMs }),
          });
          return result;
        } catch (error) {
          if (!span.isRecording()) throw error;
          const { errorClass, status } = classifyUpstreamError(error, { timedOut: call.signal.aborted });
          span.setAttributes({ 'switchyard.outcome': 'error', 'error.type': errorClass, ...(status === undefined ? {} : { 'http.response.status_code': status }) });
          recordSpanError(span, error);
          throw error;
        }
      },
      SpanKind.CLIENT,
    );
  }

  close(): Promise<void> {
    return this.inner.close?.() ?? Promise.resolve();
  }
}
