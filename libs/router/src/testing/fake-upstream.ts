import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@switchyard/observability';
import { parseRouterConfig } from '../config/router-config.loader';
import { Router, type RouterOptions } from '../router';

/**
 * Test support: minimal OpenAI-compatible upstreams on ephemeral ports, and a router over them.
 * Close them with `closeFakeUpstreams()` after each test.
 */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export type Behaviour = (res: ServerResponse, body: Record<string, unknown>) => void;

export interface FakeUpstream {
  port: number;
  received: Received[];
  close(): Promise<void>;
}

const servers: FakeUpstream[] = [];

/** A minimal OpenAI-compatible `/v1/chat/completions` server on an ephemeral port. */
export async function fakeUpstream(behaviour: Behaviour): Promise<FakeUpstream> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      received.push({ path: req.url ?? '', headers: req.headers, body });
      behaviour(res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const upstream: FakeUpstream = {
    port: (server.address() as AddressInfo).port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(upstream);
  return upstream;
}

export const json = (status: number, body: unknown): Behaviour => (res) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** A completion, streamed as SSE when the request asks for a stream (the router always does). */
export const completion = (content: string, usage: { prompt_tokens: number; completion_tokens: number } | null): Behaviour => (res, body) => {
  const usageBody = usage === null ? undefined : { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
  if (body.stream !== true) {
    json(200, {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      ...(usageBody ? { usage: usageBody } : {}),
    })(res, body);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1,
    model: body.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const frames: unknown[] = [chunk({ role: 'assistant', content: '' }, null)];
  for (let i = 0; i < content.length; i += 8) frames.push(chunk({ content: content.slice(i, i + 8) }, null));
  frames.push(chunk({}, 'stop'));
  if (usageBody) frames.push({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage: usageBody });
  for (const frame of frames) res.write(`data: ${JSON.stringify(frame)}\n\n`);
  res.end('data: [DONE]\n\n');
};

export const answer = (content: string, usage = { prompt_tokens: 1200, completion_tokens: 300 }): Behaviour => completion(content, usage);

export const fail = (status: number): Behaviour => json(status, { error: { message: `failing with ${status}`, type: 'test' } });
export const hang: Behaviour = () => undefined;

/** A port nothing listens on: bind, note it, release it. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface TargetSpec {
  name: string;
  port: number;
  type?: 'local' | 'cloud';
  contextWindow?: number;
  extra?: string;
}

/** Routes: everything goes to `primary`'s ordered list of targets; the catch-all names the last one. */
export function routerFor(
  targets: TargetSpec[],
  options: { secrets?: Record<string, string>; routes?: string; maxAttempts?: number; contextFilters?: RouterOptions['contextFilters']; observers?: RouterOptions['observers'] } = {},
) {
  const targetYaml = targets
    .map(
      (t) => `
    - name: ${t.name}
      type: ${t.type ?? 'local'}
      endpoint: http://127.0.0.1:${t.port}/v1
      model: ${t.name}-model
      max_concurrency: 4
      context_window: ${t.contextWindow ?? 32768}
      cost_per_1k_tokens: {input: 0.001, output: 0.002}${t.extra ?? ''}`,
    )
    .join('');
  const routes =
    options.routes ??
    `
    - {name: primary, when: {complexity: [low, medium, high]}, targets: [${targets.map((t) => t.name).join(', ')}], priority: 10}
    - {name: fallback, when: {all_else: true}, target: ${targets[targets.length - 1]!.name}, priority: 1}`;
  const config = parseRouterConfig(
    `
router:
  max_attempts_per_call: ${options.maxAttempts ?? 3}
  targets:${targetYaml}
  routes:${routes}
`,
    'router.spec',
  );
  const secrets = options.secrets ?? {};
  return new Router({
    config,
    secrets: (name) => secrets[name],
    logger: createLogger('router-spec', 'silent'),
    ...(options.contextFilters ? { contextFilters: options.contextFilters } : {}),
    ...(options.observers ? { observers: options.observers } : {}),
  });
}

/** Closes every fake upstream opened since the last call. */
export async function closeFakeUpstreams(): Promise<void> {
  await Promise.all(servers.splice(0).map((s) => s.close()));
}
