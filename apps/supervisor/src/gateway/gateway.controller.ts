import { Body, Controller, Headers, Post, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { Tenant } from '../auth/tenant.decorator';
import { TENANT_ROUTER_ERRORS } from '../http/tenant-errors';
import { parseChatCompletionRequest } from './chat-completion.schema';
import { GatewayService, RetryLaterError, type GatewayAnswer } from './gateway.service';

export const TARGET_HEADER = 'x-switchyard-target';

/**
 * `POST /v1/chat/completions`: OpenAI-compatible, routed by the body's `metadata`, plain or
 * `stream: true` (SSE). The chosen target is in `x-switchyard-target`.
 */
@Controller('v1/chat')
@UseGuards(ApiKeyGuard)
export class GatewayController {
  constructor(private readonly gateway: GatewayService) {}

  @Post('completions')
  async completions(
    @Tenant() tenant: string,
    @Body() body: unknown,
    @Res() reply: FastifyReply,
    @Headers('idempotency-key') idempotencyKey?: string,
  ): Promise<void> {
    const request = parseChatCompletionRequest(body);
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
        .header('content-type', 'application/json; charset=utf-8')
        .send(completionBody(id, created, answer));
      return;
    }
    const includeUsage = request.body.stream_options?.include_usage === true;
    let model = request.body.model ?? '';
    const open = (target: string, source: string) => {
      if (reply.raw.headersSent) return;
      reply.hijack();
      reply.raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        [TARGET_HEADER]: target,
        'x-switchyard-source': source,
      });
      reply.raw.write(frame(chunk(id, created, model, { role: 'assistant', content: '' }, null)));
    };
    let answer: GatewayAnswer;
    try {
      answer = await this.gateway.complete({
        tenant,
        request,
        idempotencyKey,
        signal: abort.signal,
        onDelta: (text, target) => {
          open(target, 'upstream');
          reply.raw.write(frame(chunk(id, created, model, { content: text }, null)));
        },
      });
    } catch (error) {
      // Before the first byte the error is an ordinary JSON error; after it, the stream ends with an error event.
      if (!reply.raw.headersSent) throw withRetryAfter(reply, error);
      reply.raw.write(frame({ error: { code: 'upstream_failed', message: TENANT_ROUTER_ERRORS.upstream_failed.message } }));
      reply.raw.end();
      return;
    }
    model = answer.model;
    if (!reply.raw.headersSent) {
      // From the cache or an earlier identical request: replay the stored answer as a stream.
      open(answer.target, answer.source);
      reply.raw.write(frame(chunk(id, created, model, { content: answer.content }, null)));
    }
    reply.raw.write(frame(chunk(id, created, model, {}, 'stop')));
    if (includeUsage) reply.raw.write(frame({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageBody(answer) }));
    reply.raw.end('data: [DONE]\n\n');
  }
}

/** A 503 that says when to come back carries it as `Retry-After` (the error filter keeps headers already set). */
function withRetryAfter(reply: FastifyReply, error: unknown): unknown {
  if (error instanceof RetryLaterError) void reply.header('retry-after', String(error.retryAfterS));
  return error;
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
    choices: [{ index: 0, message: { role: 'assistant', content: answer.content, refusal: null }, finish_reason: 'stop', logprobs: null }],
    usage: usageBody(answer),
  };
}

function chunk(id: string, created: number, model: string, delta: Record<string, unknown>, finish: 'stop' | null) {
  return { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] };
}

function frame(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}
