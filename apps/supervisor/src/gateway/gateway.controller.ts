import { Body, Controller, Get, Headers, HttpStatus, Post, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';
import { describeInferredMeta, listedModels, Router, type ProviderChoice } from '@switchyard/router';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { Tenant } from '../auth/tenant.decorator';
import { ApiError } from '../http/api-error';
import { TENANT_ROUTER_ERRORS } from '../http/tenant-errors';
import { parseChatCompletionRequest, UnknownModelError, type ParsedChatRequest } from './chat-completion.schema';
import { GatewayService, RetryLaterError, type GatewayAnswer } from './gateway.service';
import { OpenAiErrorFilter, openAiErrorType } from './openai-error.filter';

export const TARGET_HEADER = 'x-switchyard-target';
/** Set when the tenant's calls run with targets held back, e.g. `daily_budget_spent` (cloud excluded, degraded to local). */
export const DEGRADED_HEADER = 'x-switchyard-degraded';
/** Set when the request left out task_type / complexity: what the classifier said, e.g. `task_type=code(0.412);complexity=low(0.080)`. */
export const INFERRED_HEADER = 'x-switchyard-inferred';

/**
 * `POST /v1/chat/completions`: OpenAI-compatible, routed by the body's `metadata` and the
 * `model` alias, plain or `stream: true` (SSE), the whole chat surface passed through. The
 * chosen target is in `x-switchyard-target`; errors are in OpenAI's shape.
 */
@Controller('v1/chat')
@UseGuards(ApiKeyGuard)
@UseFilters(OpenAiErrorFilter)
export class GatewayController {
  constructor(
    private readonly gateway: GatewayService,
    private readonly router: Router,
  ) {}

  @Post('completions')
  async completions(
    @Tenant() tenant: string,
    @Body() body: unknown,
    @Res() reply: FastifyReply,
    @Headers('idempotency-key') idempotencyKey?: string,
  ): Promise<void> {
    const request = this.parse(body);
    if (request.inferred !== undefined) void reply.header(INFERRED_HEADER, describeInferredMeta(request.inferred));
    const id = GatewayService.completionId();
    const created = Math.floor(Date.now() / 1000);
    // A client that hangs up (plain or streaming) cancels the upstream call: nothing runs, or bills, for nobody.
    const abort = new AbortController();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort(new Error('client went away'));
    });
    if (request.body.stream !== true) {
      const answer = await this.gateway.complete({ tenant, request, idempotencyKey, signal: abort.signal }).catch((error: unknown) => {
        throw withRetryAfter(reply, error);
      });
      void reply
        .status(200)
        .header(TARGET_HEADER, answer.target)
        .header('x-switchyard-source', answer.source)
        .headers(answer.degraded ? { [DEGRADED_HEADER]: answer.degraded.join(',') } : {})
        .header('content-type', 'application/json; charset=utf-8')
        .send(completionBody(id, created, answer));
      return;
    }
    const includeUsage = request.body.stream_options?.include_usage === true;
    const open = (target: string, source: string, degraded?: readonly string[]) => {
      if (reply.raw.headersSent) return;
      reply.hijack();
      reply.raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        [TARGET_HEADER]: target,
        'x-switchyard-source': source,
        ...(request.inferred ? { [INFERRED_HEADER]: describeInferredMeta(request.inferred) } : {}),
        ...(degraded && degraded.length > 0 ? { [DEGRADED_HEADER]: degraded.join(',') } : {}),
      });
    };
    let answer: GatewayAnswer;
    try {
      answer = await this.gateway.complete({
        tenant,
        request,
        idempotencyKey,
        signal: abort.signal,
        includeUsage,
        // The upstream's own events, from its first token on (the router may fail over until then).
        onEvents: (sse, target, restrictedBy) => {
          open(target, 'upstream', restrictedBy);
          reply.raw.write(sse);
        },
      });
    } catch (error) {
      // Before the first byte the error is an ordinary JSON error; after it, the stream ends with an error event.
      if (!reply.raw.headersSent) throw withRetryAfter(reply, error);
      const message = TENANT_ROUTER_ERRORS.upstream_failed.message;
      reply.raw.write(frame({ error: { message, type: openAiErrorType(HttpStatus.BAD_GATEWAY), param: null, code: 'upstream_failed' } }));
      reply.raw.end();
      return;
    }
    if (!reply.raw.headersSent) {
      // From the cache or an earlier identical request: replay the stored answer as a stream.
      open(answer.target, answer.source, answer.degraded);
      replay(reply.raw, id, created, answer, includeUsage);
    }
    reply.raw.end('data: [DONE]\n\n');
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
}

/** `GET /v1/models`: OpenAI's model list — `auto` (the router decides) and every alias of `router.models`. */
@Controller('v1/models')
@UseGuards(ApiKeyGuard)
@UseFilters(OpenAiErrorFilter)
export class ModelsController {
  constructor(private readonly router: Router) {}

  @Get()
  list(): { object: 'list'; data: { id: string; object: 'model'; created: number; owned_by: string }[] } {
    return { object: 'list', data: listedModels(this.router.config.config.models).map((id) => ({ id, object: 'model', created: 0, owned_by: 'switchyard' })) };
  }
}

/** A 503 or 429 that says when to come back carries it as `Retry-After` (the error filter keeps headers already set). */
function withRetryAfter(reply: FastifyReply, error: unknown): unknown {
  if (error instanceof RetryLaterError) void reply.header('retry-after', String(error.retryAfterS));
  return error;
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
