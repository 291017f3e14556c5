import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { errorResponseOf } from './error-responses';
import { readJsonRequestBody, isJsonMediaType } from './request-body';
import { RoutesBelowFastify } from './routes-below-fastify';

const LIMIT = 64;

/** A route below fastify that answers its body back, or the error mapping's answer for what the reader refused. */
const echo = {
  accepts: (request: IncomingMessage) => request.method === 'POST' && request.url === '/below',
  serve(request: IncomingMessage, response: ServerResponse) {
    readJsonRequestBody(request, LIMIT).then(
      (body) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ body: body ?? null })),
      (error: unknown) => {
        const { status, body } = errorResponseOf(error);
        response.writeHead(status, { 'content-type': 'application/json', ...(request.complete ? {} : { connection: 'close' }) }).end(JSON.stringify(body));
      },
    );
  },
};

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

describe('RoutesBelowFastify and readJsonRequestBody', () => {
  let fastify: FastifyInstance;
  let port: number;

  beforeAll(async () => {
    const below = new RoutesBelowFastify();
    below.mount(echo);
    fastify = Fastify({ serverFactory: below.serverFactory, keepAliveTimeout: 1234 });
    fastify.post('/above', () => ({ served: 'fastify' }));
    fastify.get('/below', () => ({ served: 'fastify' }));
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    port = (fastify.server.address() as AddressInfo).port;
  });

  afterAll(() => fastify.close());

  function send(path: string, options: { method?: string; headers?: Record<string, string>; chunks?: string[] } = {}): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path, method: options.method ?? 'POST', headers: options.headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      for (const chunk of options.chunks ?? []) req.write(chunk);
      req.end();
    });
  }

  const json = (text: string) => ({ 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });

  it('serves a request its route accepts before fastify, and hands every other one to fastify', async () => {
    expect(JSON.parse((await send('/below', { headers: json('{"a":1}'), chunks: ['{"a":1}'] })).body)).toEqual({ body: { a: 1 } });
    expect(JSON.parse((await send('/above')).body)).toEqual({ served: 'fastify' });
    expect(JSON.parse((await send('/below', { method: 'GET' })).body)).toEqual({ served: 'fastify' });
    expect((await send('/nowhere')).status).toBe(404);
  });

  it("makes the server as fastify would, with fastify's options", () => {
    expect(fastify.server.keepAliveTimeout).toBe(1234);
  });

  it('reads a body sent in chunks, and a body without a type and without bytes as none', async () => {
    const chunked = await send('/below', { headers: { 'content-type': 'application/json; charset=UTF-8' }, chunks: ['{"parts":', '["x", ', '"😀"]}'] });
    expect(JSON.parse(chunked.body)).toEqual({ body: { parts: ['x', '😀'] } });
    expect(JSON.parse((await send('/below')).body)).toEqual({ body: null });
  });

  it('refuses another media type, or bytes without a type, with 415', async () => {
    const text = await send('/below', { headers: { 'content-type': 'text/plain', 'content-length': '2' }, chunks: ['hi'] });
    expect(text.status).toBe(415);
    expect(JSON.parse(text.body)).toEqual({ error: { code: 'unsupported_media_type', message: 'Unsupported Media Type' } });
    expect((await send('/below', { headers: { 'content-length': '2' }, chunks: ['{}'] })).status).toBe(415);
  });

  it('refuses a body over the limit with 413, from its Content-Length or while reading it, and closes the connection', async () => {
    const big = `{"x":"${'y'.repeat(LIMIT)}"}`;
    const declared = await send('/below', { headers: json(big), chunks: [big] });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toEqual({ error: { code: 'payload_too_large', message: 'Request body is too large' } });
    const streamed = await send('/below', { headers: { 'content-type': 'application/json' }, chunks: [big.slice(0, 40), big.slice(40)] });
    expect(streamed.status).toBe(413);
    expect(streamed.headers.connection).toBe('close');
  });

  it("answers JSON that breaks the body rules with parseJsonBody's 400, naming the path", async () => {
    const broken = await send('/below', { headers: json('{"a":'), chunks: ['{"a":'] });
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.body)).toMatchObject({ error: { code: 'invalid_request', issues: [{ path: '(body)', message: 'request body is not valid JSON' }] } });
    const proto = '{"__proto__": {"x": 1}}';
    expect(JSON.parse((await send('/below', { headers: json(proto), chunks: [proto] })).body)).toMatchObject({ error: { issues: [{ path: '__proto__' }] } });
  });

  it('knows application/json with parameters and in any case, and nothing else', () => {
    expect(isJsonMediaType('application/json')).toBe(true);
    expect(isJsonMediaType('Application/JSON ; charset=utf-8')).toBe(true);
    expect(isJsonMediaType('application/json-patch+json')).toBe(false);
    expect(isJsonMediaType('text/json')).toBe(false);
  });
});
