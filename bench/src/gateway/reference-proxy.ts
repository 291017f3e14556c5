import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { request } from 'undici';
import { OpenAiChatProvider, parseRouterConfig } from '@switchyard/router';

/**
 * The least a Node gateway can do on this machine, as reference sides of the gateway bench
 * (forked by gateway.bench.ts): a bare node:http server that forwards one chat completion
 * to llm-sim and answers it. No routing, auth, health, cache or ledger.
 *
 *   transport: passes the body through with undici's request() (what any proxy must pay)
 *   sdk:       calls the target through our OpenAI provider (the openai SDK on the same
 *              undici pool, streamed upstream for first-token timing), exactly as the
 *              router does, and answers a chat.completion
 *
 * argv: <mode> <sim url, e.g. http://127.0.0.1:1234/v1> <model>. Prints `listening <port>`.
 */
type Mode = 'transport' | 'sdk';

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

async function main(): Promise<void> {
  const [mode, endpoint, model] = process.argv.slice(2) as [Mode, string, string];
  const provider = mode === 'sdk' ? sdkProvider(endpoint, model) : undefined;
  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
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
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`);
  });
}

void main();
