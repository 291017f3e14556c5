import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { request } from 'undici';
import { OpenAiChatProvider, parseRouterConfig } from '@switchyard/router';

/**
 * The least a Node gateway can do on this machine, as reference sides of the gateway bench
 * (forked by gateway.bench.ts): a bare node:http server that forwards one chat completion
 * to llm-sim and answers it. No routing, auth, health, cache or ledger.
 *
 *   transport: passes the body through with undici's request() (what any proxy must pay)
 *   stream:    asks the upstream for a stream (`stream: true`, `include_usage`, as the router
 *              does for first-token timing) with undici's request(), parses each SSE event
 *              and answers one chat.completion: the least a gateway that streams upstream pays
 *   sdk:       calls the target through our OpenAI provider (the openai SDK on the same
 *              undici pool, streamed upstream for first-token timing), exactly as the
 *              router does, and answers a chat.completion
 *
 * argv: <mode> <sim url, e.g. http://127.0.0.1:1234/v1> <model>. Prints `listening <port>`.
 */
type Mode = 'transport' | 'stream' | 'sdk';

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sdkProvider(endpoint: string, model: string): OpenAiChatProvider {
  const config = parseRouterConfig(
    `router:
  targets:
    - {name: reference, type: local, endpoint: "${endpoint}", model: "${model}", max_concurrency: 64, context_window: 32768, cost_per_1k_tokens: {input: 0, output: 0}}
  routes:
    - {name: all, when: {all_else: true}, target: reference, priority: 1}
`,
    'reference-proxy',
  );
  return new OpenAiChatProvider(config.targets[0]!, 'not-needed');
}

/** One streamed upstream call, its events parsed and assembled into a chat.completion body. */
async function streamedUpstream(endpoint: string, raw: string): Promise<string> {
  const request_ = JSON.parse(raw) as Record<string, unknown>;
  const upstream = await request(`${endpoint}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ ...request_, stream: true, stream_options: { include_usage: true } }),
  });
  const text = await upstream.body.text();
  let content = '';
  let model = '';
  let finish = 'stop';
  let usage: unknown;
  for (const event of text.split('\n\n')) {
    if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
    const chunk = JSON.parse(event.slice(6)) as { model: string; choices: { delta?: { content?: string }; finish_reason?: string | null }[]; usage?: unknown };
    model = chunk.model;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (choice?.delta?.content) content += choice.delta.content;
    if (choice?.finish_reason) finish = choice.finish_reason;
  }
  return JSON.stringify({
    id: 'chatcmpl-reference',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finish }],
    usage,
  });
}

async function main(): Promise<void> {
  const [mode, endpoint, model] = process.argv.slice(2) as [Mode, string, string];
  const provider = mode === 'sdk' ? sdkProvider(endpoint, model) : undefined;
  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      if (mode === 'stream') {
        send(res, 200, await streamedUpstream(endpoint, raw));
        return;
      }
      if (provider === undefined) {
        const upstream = await request(`${endpoint}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
        send(res, upstream.statusCode, await upstream.body.text());
        return;
      }
      const body = JSON.parse(raw) as { messages: { role: 'user'; content: string }[]; max_tokens?: number };
      const result = await provider.complete({ messages: body.messages, maxTokens: body.max_tokens, signal: AbortSignal.timeout(30_000), timeoutMs: 30_000 });
      send(
        res,
        200,
        JSON.stringify({
          id: 'chatcmpl-reference',
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: result.model,
          choices: [{ index: 0, message: { role: 'assistant', content: result.content }, finish_reason: 'stop' }],
          usage: result.usage && { prompt_tokens: result.usage.inputTokens, completion_tokens: result.usage.outputTokens },
        }),
      );
    })().catch((error: unknown) => send(res, 502, JSON.stringify({ error: { message: String(error) } })));
  });
  server.keepAliveTimeout = 60_000;
  // A normal exit on SIGTERM, so that a --cpu-prof run (BENCH_PROFILE) writes its profile.
  process.once('SIGTERM', () => process.exit(0));
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`);
  });
}

void main();
