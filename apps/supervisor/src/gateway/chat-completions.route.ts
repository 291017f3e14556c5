import { randomUUID } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { context } from '@opentelemetry/api';
import { HttpStatus, Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@switchyard/config';
import type { Logger } from '@switchyard/observability';
import { APP_CONFIG, LOGGER } from '@switchyard/platform';
import { describeInferredMeta, Router, type ProviderChoice } from '@switchyard/router';
import { ApiKeyRegistry, DEV_TENANT, bearerToken } from '../auth/api-keys';
import { ApiError, RetryLaterError } from '../http/api-error';
import { clientGoneFrom, errorResponseOf, logRequestError } from '../http/error-responses';
import { endServerSpan, startServerSpan } from '../http/http-tracing';
import { readJsonRequestBody } from '../http/request-body';
import type { RouteBelowFastify } from '../http/routes-below-fastify';
import { TENANT_ROUTER_ERRORS } from '../http/tenant-errors';
import { HttpMetrics } from '../metrics/http-metrics';
import { parseChatCompletionRequest, UnknownModelError, type ParsedChatRequest } from './chat-completion.schema';
import { GatewayService, type GatewayAnswer } from './gateway.service';
import { openAiErrorType, toOpenAiError } from './openai-error.filter';

export const CHAT_COMPLETIONS_PATH = '/v1/chat/completions';
export const TARGET_HEADER = 'x-switchyard-target';
/** Set when the tenant's calls run with targets held back, e.g. `daily_budget_spent` (cloud excluded, degraded to local). */
export const DEGRADED_HEADER = 'x-switchyard-degraded';
/** Set when the request left out task_type / complexity: what the classifier said, e.g. `task_type=code(0.412);complexity=low(0.080)`. */
export const INFERRED_HEADER = 'x-switchyard-inferred';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * `POST /v1/chat/completions`: OpenAI-compatible, routed by the body's `metadata` and the
 * `model` alias, plain or `stream: true` (SSE), the whole chat surface passed through. The
 * chosen target is in `x-switchyard-target`; errors are in OpenAI's shape.
 *
 * Served on the HTTP server's own request event, before fastify and Nest see the request: the
 * gateway is the one route whose every call sits on a model call's critical path, and the
 * framework's routing, hooks, body machinery and reply cost about a fifth of its own CPU per
 * request (docs/BENCHMARKS.md, bench 4). What the framework gave every route, this route does
 * itself with the same parts: the request id, the server span, the HTTP metrics, the API key,
 * the body limit and JSON rules, and the one error mapping.
 */
@Injectable()
export class ChatCompletionsRoute implements RouteBelowFastify, BeforeApplicationShutdown {
  private readonly maxBodyBytes: number;
  private closing = false;

  constructor(
    private readonly gateway: GatewayService,
    private readonly router: Router,
    private readonly keys: ApiKeyRegistry,
    private readonly metrics: HttpMetrics,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.maxBodyBytes = config.MAX_BODY_BYTES;
  }

  beforeApplicationShutdown(): void {
    this.closing = true;
  }

  accepts(request: IncomingMessage): boolean {
    if (request.method !== 'POST') return false;
    const url = request.url ?? '';
    return url.startsWith(CHAT_COMPLETIONS_PATH) && (url.length === CHAT_COMPLETIONS_PATH.length || url.charCodeAt(CHAT_COMPLETIONS_PATH.length) === 63 /* ? */);
  }

  serve(request: IncomingMessage, response: ServerResponse): void {
    const startedAt = performance.now();
    const requestId = randomUUID();
    response.setHeader('x-request-id', requestId);
    const served = startServerSpan('POST', CHAT_COMPLETIONS_PATH, request.url ?? CHAT_COMPLETIONS_PATH, request.headers, requestId);
    // A client that hangs up (plain or streaming) cancels the upstream call: nothing runs, or bills, for nobody.
    const clientGone = new AbortController();
    response.once('close', () => {
      if (response.writableFinished) {
        this.metrics.record('POST', CHAT_COMPLETIONS_PATH, response.statusCode, performance.now() - startedAt);
        endServerSpan(served.span, 'POST', CHAT_COMPLETIONS_PATH, response.statusCode);
      } else {
        served.span.end();
        clientGone.abort(new Error('client went away'));
      }
    });
    context.with(served.context, () => {
      this.answer(request, response, clientGone.signal).catch((error: unknown) => this.fail(request, response, error));
    });
  }

  private async answer(request: IncomingMessage, response: ServerResponse, signal: AbortSignal): Promise<void> {
    if (this.closing) {
      response.setHeader('connection', 'close');
      throw new RetryLaterError('shutting_down', 'this supervisor is shutting down; retry (another instance will answer)', 1);
    }
    const tenant = this.tenantOf(request);
    const chat = this.parse(await readJsonRequestBody(request, this.maxBodyBytes));
    const header = request.headers['idempotency-key'];
    const idempotencyKey = Array.isArray(header) ? header[0] : header;
    if (chat.inferred !== undefined) response.setHeader(INFERRED_HEADER, describeInferredMeta(chat.inferred));
    const id = GatewayService.completionId();
    const created = Math.floor(Date.now() / 1000);
    if (chat.body.stream !== true) {
      const answer = await this.gateway.complete({ tenant, request: chat, idempotencyKey, signal });
      const text = JSON.stringify(completionBody(id, created, answer));
      response.writeHead(200, { ...answerHeaders(answer.target, answer.source, answer.degraded), 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) });
      response.end(text);
      return;
    }
    const includeUsage = chat.body.stream_options?.include_usage === true;
    const open = (target: string, source: string, degraded?: readonly string[]) => {
      if (response.headersSent) return;
      response.writeHead(200, { ...answerHeaders(target, source, degraded), 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    };
    let answer: GatewayAnswer;
    try {
      answer = await this.gateway.complete({
        tenant,
        request: chat,
        idempotencyKey,
        signal,
        includeUsage,
        // The upstream's own events, from its first token on (the router may fail over until then).
        onEvents: (sse, target, restrictedBy) => {
          open(target, 'upstream', restrictedBy);
          response.write(sse);
        },
      });
    } catch (error) {
      // Before the first byte the error is an ordinary JSON error; after it, the stream ends with an error event.
      if (!response.headersSent) throw error;
      logRequestError(this.logger, error, errorResponseOf(error), response.destroyed);
      const message = TENANT_ROUTER_ERRORS.upstream_failed.message;
      response.end(frame({ error: { message, type: openAiErrorType(HttpStatus.BAD_GATEWAY), param: null, code: 'upstream_failed' } }));
      return;
    }
    if (!response.headersSent) {
      // From the cache or an earlier identical request: replay the stored answer as a stream.
      open(answer.target, answer.source, answer.degraded);
      replay(response, id, created, answer, includeUsage);
    }
    response.end('data: [DONE]\n\n');
  }

  /** `Authorization: Bearer <key>` as the tenant it belongs to; in dev mode (no keys) everyone is `dev`. */
  private tenantOf(request: IncomingMessage): string {
    if (this.keys.devMode) return DEV_TENANT;
    const token = bearerToken(request.headers.authorization);
    if (!token) throw ApiError.unauthorized('missing API key: send Authorization: Bearer <key>');
    const tenant = this.keys.tenantFor(token);
    if (!tenant) throw ApiError.unauthorized('unknown API key');
    return tenant;
  }

  private parse(body: unknown): ParsedChatRequest {
    const config = this.router.config.config;
    try {
      return parseChatCompletionRequest(body, { aliases: config.models, maxN: config.gateway.max_n, inferMeta: (given, messages) => this.router.inferMeta(given, messages) });
    } catch (error) {
      if (error instanceof UnknownModelError) throw new ApiError(HttpStatus.NOT_FOUND, 'model_not_found', error.message, [{ path: 'model', message: error.message }]);
      throw error;
    }
  }

  /** The error as OpenAI answers one, logged as every route logs its errors; nothing when the client is gone. */
  private fail(request: IncomingMessage, response: ServerResponse, error: unknown): void {
    const answer = errorResponseOf(error);
    const clientGone = clientGoneFrom(response);
    logRequestError(this.logger, error, answer, clientGone);
    if (clientGone) return;
    if (response.headersSent) {
      response.end();
      return;
    }
    const text = JSON.stringify(toOpenAiError(answer.status, answer.body));
    const headers: OutgoingHttpHeaders = { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) };
    if (answer.retryAfterS !== undefined) headers['retry-after'] = String(answer.retryAfterS);
    // A body refused before it was read to its end leaves the rest on the socket: the connection ends with this answer.
    if (!request.complete) headers.connection = 'close';
    response.writeHead(answer.status, headers);
    response.end(text);
  }
}

function answerHeaders(target: string, source: string, degraded: readonly string[] | undefined): OutgoingHttpHeaders {
  return degraded && degraded.length > 0 ? { [TARGET_HEADER]: target, 'x-switchyard-source': source, [DEGRADED_HEADER]: degraded.join(',') } : { [TARGET_HEADER]: target, 'x-switchyard-source': source };
}

function choicesOf(answer: GatewayAnswer): ProviderChoice[] {
  return answer.choices ?? [{ index: 0, content: answer.content, finishReason: answer.finishReason ?? 'stop' }];
}

function usageBody(answer: GatewayAnswer) {
  return { prompt_tokens: answer.usage.inputTokens, completion_tokens: answer.usage.outputTokens, total_tokens: answer.usage.inputTokens + answer.usage.outputTokens };
}

function completionBody(id: string, created: number, answer: GatewayAnswer) {
  return {
    id,
    object: 'chat.completion',
    created,
    model: answer.model,
    choices: choicesOf(answer).map((choice) => ({
      index: choice.index,
      message: {
        role: 'assistant',
        content: choice.toolCalls && choice.content === '' ? null : choice.content,
        ...(choice.toolCalls ? { tool_calls: choice.toolCalls } : {}),
        refusal: null,
      },
      finish_reason: choice.finishReason,
      logprobs: null,
    })),
    usage: usageBody(answer),
  };
}

/** A stored answer as the stream OpenAI would have sent: per choice a role chunk, its content and tool calls, its finish; then usage if asked. */
function replay(out: ServerResponse, id: string, created: number, answer: GatewayAnswer, includeUsage: boolean): void {
  const model = answer.model;
  const choices = choicesOf(answer);
  for (const choice of choices) {
    out.write(frame(chunk(id, created, model, choice.index, { role: 'assistant', content: '' }, null)));
    if (choice.content !== '') out.write(frame(chunk(id, created, model, choice.index, { content: choice.content }, null)));
    if (choice.toolCalls) {
      const toolCalls = choice.toolCalls.map((call, index) => ({ index, ...call }));
      out.write(frame(chunk(id, created, model, choice.index, { tool_calls: toolCalls }, null)));
    }
  }
  for (const choice of choices) out.write(frame(chunk(id, created, model, choice.index, {}, choice.finishReason)));
  if (includeUsage) out.write(frame({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageBody(answer) }));
}

function chunk(id: string, created: number, model: string, index: number, delta: Record<string, unknown>, finish: string | null) {
  return { id, object: 'chat.completion.chunk', created, model, choices: [{ index, delta, finish_reason: finish, logprobs: null }] };
}

function frame(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}
