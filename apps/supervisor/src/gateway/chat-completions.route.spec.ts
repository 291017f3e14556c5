import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpStatus } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import type { AppConfig } from '@switchyard/config';
import { MetricsRegistry, type Logger } from '@switchyard/observability';
import type { Router } from '@switchyard/router';
import { ApiKeyRegistry } from '../auth/api-keys';
import { RetryLaterError } from '../http/api-error';
import { HttpMetrics } from '../metrics/http-metrics';
import { ChatCompletionsRoute, CHAT_COMPLETIONS_PATH } from './chat-completions.route';
import type { GatewayAnswer, GatewayCall, GatewayService } from './gateway.service';

const ANSWER: GatewayAnswer = { content: 'hello', model: 'qwen', target: 'local_vllm_7b', usage: { inputTokens: 3, outputTokens: 1 }, source: 'upstream' };
const CHAT = { model: 'auto', messages: [{ role: 'user', content: 'hi' }], metadata: { task_type: 'chat', complexity: 'low' } };

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** The route on a real HTTP server, with a gateway that does what each test says. */
async function start(complete: (call: GatewayCall) => Promise<GatewayAnswer>, keys = new Map<string, string>()) {
  const logs: { level: string; msg: string }[] = [];
  const at = (level: string) => (_obj: unknown, msg: string) => logs.push({ level, msg });
  const logger = { info: at('info'), warn: at('warn'), error: at('error') } as unknown as Logger;
  const registry = new MetricsRegistry();
  const router = { config: { config: { models: {}, gateway: { max_n: 4 } } }, inferMeta: () => undefined } as unknown as Router;
  const route = new ChatCompletionsRoute(
    { complete } as unknown as GatewayService,
    router,
    new ApiKeyRegistry(keys),
    new HttpMetrics(registry, {} as HttpAdapterHost),
    logger,
    { MAX_BODY_BYTES: 10_000 } as AppConfig,
  );
  const server: Server = createServer((req, res) => (route.accepts(req) ? route.serve(req, res) : res.writeHead(404).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const send = (body: unknown, headers: Record<string, string> = {}, path = CHAT_COMPLETIONS_PATH): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const text = JSON.stringify(body);
      const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
        let received = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (received += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: received }));
      });
      req.on('error', reject);
      req.end(text);
    });
  return {
    route,
    send,
    port,
    logs,
    registry,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('ChatCompletionsRoute (below fastify)', () => {
  let stack: Awaited<ReturnType<typeof start>> | undefined;
  afterEach(() => stack?.close());

  it('answers a completion with the target and the request id, and counts it under its route', async () => {
    let seen: GatewayCall | undefined;
    stack = await start(async (call) => {
      seen = call;
      return ANSWER;
    });
    const answer = await stack.send(CHAT, { 'idempotency-key': 'k-1' }, `${CHAT_COMPLETIONS_PATH}?trace=1`);
    expect(answer.status).toBe(200);
    expect(answer.headers['x-switchyard-target']).toBe('local_vllm_7b');
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(answer.body)).toMatchObject({ object: 'chat.completion', model: 'qwen', choices: [{ message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }], usage: { total_tokens: 4 } });
    expect(seen).toMatchObject({ tenant: 'dev', idempotencyKey: 'k-1' });
    expect(await stack.registry.registry.getSingleMetricAsString('switchyard_http_requests_total')).toContain('method="POST",route="/v1/chat/completions",status="200"} 1');
  });

  it('streams the upstream events and ends with [DONE]', async () => {
    stack = await start(async (call) => {
      call.onEvents?.('data: {"choices":[{"delta":{"content":"he"}}]}\n\n', 'local_vllm_7b');
      return ANSWER;
    });
    const answer = await stack.send({ ...CHAT, stream: true });
    expect(answer.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(answer.body).toBe('data: {"choices":[{"delta":{"content":"he"}}]}\n\ndata: [DONE]\n\n');
  });

  it("refuses a missing or unknown API key with OpenAI's 401, before reading the body", async () => {
    const complete = jest.fn(async () => ANSWER);
    stack = await start(complete, new Map([['secret-key', 'acme']]));
    const missing = await stack.send(CHAT);
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.body)).toEqual({ error: { message: 'missing API key: send Authorization: Bearer <key>', type: 'authentication_error', param: null, code: 'unauthorized' } });
    expect((await stack.send(CHAT, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await stack.send(CHAT, { 'content-type': 'text/plain' })).status).toBe(401);
    expect((await stack.send(CHAT, { authorization: 'Bearer secret-key' })).status).toBe(200);
    expect(complete).toHaveBeenCalledTimes(1);
    expect(complete.mock.calls[0]).toMatchObject([{ tenant: 'acme' }]);
  });

  it('names the failing path of a bad request, and the unknown model', async () => {
    stack = await start(async () => ANSWER);
    const bad = await stack.send({ ...CHAT, messages: [] });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ error: { type: 'invalid_request_error', param: 'messages' } });
    const unknown = await stack.send({ ...CHAT, model: 'nope' });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toMatchObject({ error: { code: 'model_not_found', param: 'model' } });
  });

  it('sends Retry-After with a 429 or 503 that says when to come back', async () => {
    stack = await start(async () => {
      throw new RetryLaterError('rate_limit_exceeded', 'at most 1 gateway request a minute', 17, HttpStatus.TOO_MANY_REQUESTS);
    });
    const limited = await stack.send(CHAT);
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('17');
    expect(JSON.parse(limited.body)).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
  });

  it('hides an unexpected error behind a 500 and logs it', async () => {
    stack = await start(async () => {
      throw new Error('boom');
    });
    const failed = await stack.send(CHAT);
    expect(failed.status).toBe(500);
    expect(failed.body).not.toContain('boom');
    expect(stack.logs).toEqual([{ level: 'error', msg: 'request failed' }]);
  });

  it('answers 503 and closes the connection once the supervisor is shutting down', async () => {
    const complete = jest.fn(async () => ANSWER);
    stack = await start(complete);
    stack.route.beforeApplicationShutdown();
    const closing = await stack.send(CHAT);
    expect(closing.status).toBe(503);
    expect(closing.headers.connection).toBe('close');
    expect(JSON.parse(closing.body)).toMatchObject({ error: { code: 'shutting_down' } });
    expect(complete).not.toHaveBeenCalled();
  });

  it('cancels the upstream call when the client hangs up', async () => {
    let signal: AbortSignal | undefined;
    stack = await start(
      (call) =>
        new Promise((_resolve, reject) => {
          signal = call.signal;
          call.signal?.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    );
    const client = httpRequest({ host: '127.0.0.1', port: stack.port, path: CHAT_COMPLETIONS_PATH, method: 'POST', headers: { 'content-type': 'application/json' } });
    client.on('error', () => undefined);
    client.end(JSON.stringify(CHAT));
    while (signal === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
    client.destroy();
    while (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(signal.reason).toEqual(new Error('client went away'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stack.logs).toEqual([{ level: 'info', msg: 'request ended: the client went away' }]);
  });
});
