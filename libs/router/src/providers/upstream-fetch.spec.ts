import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI, { APIConnectionError, APIError } from 'openai';
import { startTunnellingProxy } from '@switchyard/devkit';
import { createUpstreamFetch, createUpstreamFetchByTarget, notifyWhenConnected, type UpstreamFetch } from './upstream-fetch';

interface Seen {
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let baseURL: string;
let seen: Seen[];
let reply: (res: ServerResponse) => void;
let upstream: UpstreamFetch;

beforeEach(async () => {
  seen = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', headers: req.headers, body });
      reply(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  upstream = createUpstreamFetch();
});

async function stopServer(): Promise<void> {
  if (!server.listening) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

afterEach(async () => {
  await upstream.close();
  await stopServer();
});

const client = () =>
  new OpenAI({ baseURL, apiKey: 'sk-test', fetch: upstream.fetch, maxRetries: 0, organization: null, project: null, adminAPIKey: null, webhookSecret: null, logLevel: 'off' });

const sse = (res: ServerResponse, frames: unknown[], gapMs = 0) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req-1' });
  const lines = [...frames.map((frame) => `data: ${JSON.stringify(frame)}\n\n`), 'data: [DONE]\n\n'];
  if (gapMs === 0) {
    res.end(lines.join(''));
    return;
  }
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    if (i === lines.length) return void res.end();
    res.write(lines[i++]);
    setTimeout(next, gapMs);
  };
  next();
};

const chunk = (content: string) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] });

describe('createUpstreamFetch as the openai SDK fetch', () => {
  it('sends the SDK request (method, JSON body, auth and extra headers) and returns a plain completion', async () => {
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req-7' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }));
    };
    const { data, response } = await client()
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'ping' }] }, { headers: { 'x-switchyard-task': 't-1' } })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('hi');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('req-7');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.method).toBe('POST');
    expect(seen[0]!.headers.authorization).toBe('Bearer sk-test');
    expect(seen[0]!.headers['x-switchyard-task']).toBe('t-1');
    expect(JSON.parse(seen[0]!.body)).toEqual({ model: 'm', messages: [{ role: 'user', content: 'ping' }] });
  });

  it('streams server-sent events through the SDK, chunk by chunk', async () => {
    reply = (res) => sse(res, [chunk('a'), chunk('b'), chunk('c')], 5);
    const stream = await client().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'ping' }], stream: true });
    const pieces: string[] = [];
    for await (const event of stream) pieces.push(event.choices[0]?.delta.content ?? '');
    expect(pieces).toEqual(['a', 'b', 'c']);
  });

  it('turns an error status into the SDK error with its status and headers (Retry-After)', async () => {
    reply = (res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
      res.end(JSON.stringify({ error: { message: 'slow down', type: 'rate_limit' } }));
    };
    const error = await client()
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'ping' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(429);
    expect((error as APIError).headers?.get('retry-after')).toBe('7');
    expect((error as APIError).message).toContain('slow down');
  });

  it('reports a refused connection as an SDK connection error caused by ECONNREFUSED', async () => {
    await stopServer();
    const error = await client()
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'ping' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    // (under jest the SDK copies the cross-realm cause, keeping its message but not its `code`)
    expect(String((error as Error).cause)).toContain('ECONNREFUSED');
  });

  it('stops reading a stream and lets the upstream go when the signal aborts mid-body', async () => {
    let upstreamGone!: () => void;
    const gone = new Promise<void>((resolve) => (upstreamGone = resolve));
    reply = (res) => {
      res.once('close', () => upstreamGone());
      sse(res, Array.from({ length: 200 }, (_, i) => chunk(String(i))), 5);
    };
    const abort = new AbortController();
    const stream = await client().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'ping' }], stream: true }, { signal: abort.signal });
    const pieces: string[] = [];
    // The SDK ends an aborted stream quietly (the router checks its signal afterwards).
    for await (const event of stream) {
      pieces.push(event.choices[0]?.delta.content ?? '');
      if (pieces.length === 3) abort.abort(new Error('deadline'));
    }
    expect(pieces.length).toBeLessThan(10);
    await gone;
  });

  it('tells notifyWhenConnected once the connection is up, before the response headers come', async () => {
    const events: string[] = [];
    reply = (res) => {
      events.push('request reached the server');
      setTimeout(() => sse(res, [chunk('late headers')]), 100);
    };
    const stream = await client().chat.completions.create(
      { model: 'm', messages: [{ role: 'user', content: 'ping' }], stream: true },
      { fetchOptions: notifyWhenConnected(() => events.push('connected')) },
    );
    events.push('headers');
    for await (const event of stream) events.push(event.choices[0]?.delta.content ?? '');
    expect(events).toEqual(['connected', 'request reached the server', 'headers', 'late headers']);
  });

  it('does not send a request whose signal has already aborted', async () => {
    reply = (res) => sse(res, [chunk('a')]);
    const aborted = AbortSignal.abort(new Error('too late'));
    await expect(upstream.fetch(`${baseURL}/chat/completions`, { method: 'POST', body: '{}', signal: aborted })).rejects.toThrow('too late');
    expect(seen).toHaveLength(0);
  });

  it('refuses bodies it does not send (streams, forms) and Request objects, saying so', async () => {
    await expect(upstream.fetch(`${baseURL}/x`, { method: 'POST', body: new URLSearchParams({ a: '1' }) })).rejects.toThrow(/only string and byte bodies/);
    await expect(upstream.fetch(new Request(`${baseURL}/x`))).rejects.toThrow(/pass a URL/);
    expect(seen).toHaveLength(0);
  });
});

describe('createUpstreamFetch through an egress proxy', () => {
  it('tunnels upstream calls through the proxy, with its credentials', async () => {
    const proxy = await startTunnellingProxy();
    const proxied = createUpstreamFetch({ proxy: { httpProxy: proxy.url } });
    try {
      reply = (res) => sse(res, [chunk('via the proxy')]);
      const sdk = new OpenAI({ baseURL, apiKey: 'sk-test', fetch: proxied.fetch, maxRetries: 0, organization: null, project: null, adminAPIKey: null, webhookSecret: null, logLevel: 'off' });
      const stream = await sdk.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'ping' }], stream: true });
      const pieces: string[] = [];
      for await (const event of stream) pieces.push(event.choices[0]?.delta.content ?? '');
      expect(pieces).toEqual(['via the proxy']);
      expect(proxy.connects).toEqual([{ target: new URL(baseURL).host, auth: `Basic ${Buffer.from('gateway:s3cret').toString('base64')}` }]);
      expect(seen).toHaveLength(1);
    } finally {
      await proxied.close();
      await proxy.close();
    }
  });

  it('reaches hosts listed in noProxy directly', async () => {
    const proxy = await startTunnellingProxy();
    const proxied = createUpstreamFetch({ proxy: { httpProxy: proxy.url, noProxy: 'localhost,127.0.0.1' } });
    try {
      reply = (res) => sse(res, [chunk('direct')]);
      const response = await proxied.fetch(`${baseURL}/chat/completions`, { method: 'POST', body: '{}' });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('direct');
      expect(proxy.connects).toEqual([]);
      expect(seen).toHaveLength(1);
    } finally {
      await proxied.close();
      await proxy.close();
    }
  });

  it('reaches local targets directly and only cloud targets through the proxy (sensitive data never passes it)', async () => {
    const proxy = await startTunnellingProxy();
    const byTarget = createUpstreamFetchByTarget({ proxy: { httpProxy: proxy.url } });
    try {
      reply = (res) => sse(res, [chunk('ok')]);
      await (await byTarget.fetchFor({ type: 'local' })(`${baseURL}/models`)).text();
      expect(proxy.connects).toEqual([]);
      await (await byTarget.fetchFor({ type: 'cloud' })(`${baseURL}/models`)).text();
      expect(proxy.connects).toHaveLength(1);
      expect(seen).toHaveLength(2);
    } finally {
      await byTarget.close();
      await proxy.close();
    }
  });
});
