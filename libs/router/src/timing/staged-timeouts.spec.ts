import { createServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { RequestMetaSchema } from '@switchyard/contracts';
import { createLogger } from '@switchyard/observability';
import { RouterCallError } from '../calls/router-call.error';
import { parseRouterConfig } from '../config/router-config.loader';
import { Router } from '../router';

/**
 * The three timeouts against a real socket, through the real provider (openai SDK on undici):
 * the connect stage ends when the connection is up, waiting for the headers is first-token time.
 */
let server: Server;
let port: number;
let headersAfterMs: number;
let routers: Router[];

beforeEach(async () => {
  routers = [];
  headersAfterMs = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (headersAfterMs === Number.POSITIVE_INFINITY) return;
      const timer = setTimeout(() => streamAnswer(res), headersAfterMs);
      res.once('close', () => clearTimeout(timer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterEach(async () => {
  await Promise.all(routers.map((router) => router.close()));
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function streamAnswer(res: ServerResponse): void {
  const chunk = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'on time' }, finish_reason: null }] };
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
}

function routerFor(endpoint: string, options: { connectMs: number; firstTokenMs: number; type?: 'local' | 'cloud'; proxy?: string }): Router {
  const config = parseRouterConfig(
    `
router:
  max_attempts_per_call: 1
  probes: {enabled: false}
  timeouts: {connect_ms: ${options.connectMs}}
  targets:
    - {name: only, type: ${options.type ?? 'local'}, endpoint: "${endpoint}", model: m, max_concurrency: 4, context_window: 8000, cost_per_1k_tokens: {input: 0, output: 0}, first_token_timeout_ms: ${options.firstTokenMs}, timeout_ms: 10000}
  routes:
    - {name: all, when: {all_else: true}, target: only, priority: 1}
`,
    'staged-timeouts.spec',
  );
  const router = new Router({
    config,
    secrets: () => undefined,
    logger: createLogger('staged-timeouts-spec', 'silent'),
    ...(options.proxy === undefined ? {} : { upstream: { proxy: { httpProxy: options.proxy } } }),
  });
  routers.push(router);
  return router;
}

const call = (router: Router) => router.chat({ meta: RequestMetaSchema.parse({ task_type: 'extract' }), messages: [{ role: 'user', content: 'ping' }] });

describe('staged timeouts on a real connection', () => {
  it('answers when the headers come after the connect limit but within the first-token limit (headers are first-token time)', async () => {
    headersAfterMs = 600;
    const router = routerFor(`http://127.0.0.1:${port}/v1`, { connectMs: 150, firstTokenMs: 5_000 });
    const result = await call(router);
    expect(result.content).toBe('on time');
    expect(result.attempts).toEqual([expect.objectContaining({ target: 'only', outcome: 'ok' })]);
  });

  it('names the first-token stage when the connection is up but no headers come', async () => {
    headersAfterMs = Number.POSITIVE_INFINITY;
    const router = routerFor(`http://127.0.0.1:${port}/v1`, { connectMs: 100, firstTokenMs: 400 });
    const error = await call(router).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RouterCallError);
    expect(error).toMatchObject({ lastErrorClass: 'timeout' });
    expect((error as RouterCallError).attempts[0]!.message).toBe('no first token within 400 ms');
  });

  describe('a connection that is never established (an egress proxy that never answers CONNECT)', () => {
    let silentProxy: TcpServer;
    const sockets: Socket[] = [];
    beforeEach(async () => {
      silentProxy = createTcpServer((socket) => {
        sockets.push(socket);
        socket.resume();
      });
      await new Promise<void>((resolve) => silentProxy.listen(0, '127.0.0.1', resolve));
    });
    afterEach(async () => {
      for (const socket of sockets.splice(0)) socket.destroy();
      await new Promise<void>((resolve) => silentProxy.close(() => resolve()));
    });

    it('is cut by the connect limit, not the first-token limit', async () => {
      const proxy = `http://127.0.0.1:${(silentProxy.address() as AddressInfo).port}`;
      const router = routerFor(`http://127.0.0.1:${port}/v1`, { connectMs: 200, firstTokenMs: 5_000, type: 'cloud', proxy });
      const error = await call(router).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RouterCallError);
      expect((error as RouterCallError).attempts[0]!.message).toBe('no connection within 200 ms');
    });
  });
});
