import { connect } from 'node:net';
import fc from 'fast-check';
import { waitFor } from '../support/processes';
import { TestStack } from '../support/stack';

const ADMIN_TOKEN = 'e2e-admin-token-fuzz-0123456789';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const SSN = '078-05-1120';

interface Answer {
  status: number;
  text: string;
}

interface ErrorJson {
  error: { code: string; message: string; issues?: { path: string; message: string }[] };
}

const validJob = () => ({ type: 'doc_review', input: { question: 'What changed?', documents: [{ id: 'd1', text: 'Release 2 adds audit logs.' }] } });
const validChat = () => ({ model: 'auto', messages: [{ role: 'user', content: 'fuzz-ok: say hi' }], metadata: { task_type: 'chat', complexity: 'low' } });

/** Percent-encodes anything, a lone surrogate too (as bytes that are not UTF-8, which is also worth sending). */
function encodeAny(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return Array.from(text, (char) => (/[\ud800-\udfff]/.test(char) ? '%ED%A0%80' : encodeURIComponent(char))).join('');
  }
}

/** One Prometheus sample without labels (`name value`), 0 when absent. */
function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

/** A request written byte for byte: what fetch refuses to send (oversized or control-character headers). */
function rawHttp(baseUrl: string, request: string): Promise<Answer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let data = '';
    const socket = connect(Number(port), hostname, () => socket.end(request, 'latin1'));
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', (error) => (data ? undefined : reject(error)));
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, text: data.slice(data.indexOf('\r\n\r\n') + 4) });
    });
  });
}

/** The one invariant: a 2xx, or a 4xx in the error shape that repeats no large part of the input. Never a 5xx. */
function expectWellFormedAnswer(answer: Answer, context: string): void {
  if (answer.status >= 200 && answer.status < 300) return;
  if (answer.status < 400 || answer.status >= 500) throw new Error(`${context}: status ${answer.status}: ${answer.text.slice(0, 500)}`);
  const body = JSON.parse(answer.text) as ErrorJson;
  expect(typeof body.error.code).toBe('string');
  expect(typeof body.error.message).toBe('string');
  expect(answer.text.length).toBeLessThan(16_000);
}

describe('fuzzed and hostile input against the real supervisor', () => {
  let stack: TestStack;

  const send = async (method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> => {
    const res = await fetch(`${stack.baseUrl}${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body }),
    });
    return { status: res.status, text: await res.text() };
  };
  const metrics = async () => (await send('GET', '/metrics')).text;

  /** A normal gateway call still gets its ledger row written: the ledger is not stuck. */
  const expectLedgerWrites = async () => {
    const before = metric(await metrics(), 'switchyard_ledger_rows_written_total');
    const ok = await send('POST', '/v1/chat/completions', JSON.stringify(validChat()));
    expect(ok.status).toBe(200);
    await waitFor('the ledger row of a normal call to be written', async () =>
      metric(await metrics(), 'switchyard_ledger_rows_written_total') > before ? true : undefined,
    );
  };

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0, env: { ADMIN_TOKEN } });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  describe('the reported defects', () => {
    it.each([
      ['a NUL', 'x\u0000y'],
      ['a lone surrogate', 'b\udc00'],
    ])('refuses %s in gateway metadata with a 400, and the ledger keeps writing for everyone', async (_, businessType) => {
      const poisoned = await send('POST', '/v1/chat/completions', JSON.stringify({ ...validChat(), metadata: { business_type: businessType } }));
      expect(poisoned.status).toBe(400);
      expect((JSON.parse(poisoned.text) as ErrorJson).error.issues?.[0]?.path).toBe('metadata.business_type');
      await expectLedgerWrites();
      const text = await metrics();
      expect(metric(text, 'switchyard_ledger_failed_writes_total')).toBe(0);
    });

    it.each([
      ['input.documents.0.text', { ...validJob(), input: { question: 'q', documents: [{ id: 'a', text: `SSN ${SSN} hello\u0000world` }] } }],
      ['input.question', { ...validJob(), input: { question: `q\ud800 ${SSN}`, documents: [{ id: 'a', text: 't' }] } }],
      ['input.documents.0.id', { ...validJob(), input: { question: 'q', documents: [{ id: 'a\u0000', text: 't' }] } }],
      ['meta.business_type', { ...validJob(), meta: { sensitivity: 'sensitive', business_type: 'x\udc00' } }],
      ['meta.tags.0', { ...validJob(), meta: { sensitivity: 'sensitive', tags: ['\u0000'] } }],
    ])('answers a NUL or lone surrogate in a job at %s with a 400 naming it, and logs none of the text', async (path, body) => {
      const answer = await send('POST', '/v1/jobs', JSON.stringify(body));
      expect(answer.status).toBe(400);
      expect((JSON.parse(answer.text) as ErrorJson).error.issues?.map((i) => i.path)).toContain(path);
      expect(stack.supervisor.output.join('\n')).not.toContain(SSN);
    });

    it('bounds nesting depth: a 10,000-level array in response_format with an Idempotency-Key is a 400 naming the path', async () => {
      const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
      const body = `{"messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json_object", "x": ${deep}}}`;
      const answer = await send('POST', '/v1/chat/completions', body, { 'idempotency-key': 'deep-1' });
      expect(answer.status).toBe(400);
      const issue = (JSON.parse(answer.text) as ErrorJson).error.issues?.[0];
      expect(issue?.path.startsWith('response_format.x.0.0')).toBe(true);
      expect(issue?.message).toMatch(/nests deeper than 64 levels/);
      expect((await send('POST', '/v1/jobs', `{"type": "doc_review", "input": ${deep}}`)).status).toBe(400);
    });

    it('answers /admin/costs for year 0000 with a 400 naming the parameters', async () => {
      const answer = await send('GET', '/admin/costs?since=0000-01-01&until=0000-12-31', undefined, ADMIN);
      expect(answer.status).toBe(400);
      expect((JSON.parse(answer.text) as ErrorJson).error.issues?.map((i) => i.path)).toEqual(['query.since', 'query.until']);
    });

    it('answers 431, 414, a bad URL and a control character in a header in the error shape, echoing no URL', async () => {
      const port = new URL(stack.baseUrl).port;
      const huge = await rawHttp(stack.baseUrl, `GET /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Big: ${'h'.repeat(40_000)}\r\n\r\n`);
      expect(huge.status).toBe(431);
      expect((JSON.parse(huge.text) as ErrorJson).error.code).toBe('headers_too_large');

      const control = await rawHttp(stack.baseUrl, `GET /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Odd: a\u0001b\r\n\r\n`);
      expect(control.status).toBe(400);
      expect((JSON.parse(control.text) as ErrorJson).error.code).toBe('invalid_request');

      const longParam = await send('GET', `/v1/jobs/${'a'.repeat(5_000)}`);
      expect(longParam.status).toBe(414);
      expect((JSON.parse(longParam.text) as ErrorJson).error.code).toBe('uri_too_long');
      expect(longParam.text).not.toContain('aaaaaaaaaa');

      const badUrl = await send('GET', '/v1/jobs/%E0%A4%A');
      expect(badUrl.status).toBe(400);
      expect(JSON.parse(badUrl.text)).toEqual({ error: { code: 'invalid_request', message: expect.any(String) } });
      expect(badUrl.text).not.toContain('%E0');
    });

    it('refuses a __proto__ body for its key, not as invalid JSON, and echoes no more than a fragment of a 5 MB type', async () => {
      const proto = await send('POST', '/v1/jobs', `{"type": "doc_review", "__proto__": {"admin": true}, "input": {}}`);
      expect(proto.status).toBe(400);
      expect(proto.text).not.toMatch(/not valid JSON/);
      expect((JSON.parse(proto.text) as ErrorJson).error.issues?.[0]?.path).toBe('__proto__');

      const hugeType = await send('POST', '/v1/jobs', JSON.stringify({ type: 'x'.repeat(5_000_000), input: {} }));
      expect(hugeType.status).toBe(400);
      expect(hugeType.text.length).toBeLessThan(2_000);
    });
  });

  describe('property: any request is a 2xx or a 4xx in the error shape, never a 5xx', () => {
    const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
    const specials = fc.constantFrom('\u0000', '\ud800', '\udc00', 'a\u0000b', '\udbff\udfff', '😀', '__proto__', 'constructor', '', ' ', 'null', '1e400');
    // Mostly plausible values, so that a request often gets past every other check to the one odd field.
    const anyString = fc.oneof(
      { arbitrary: fc.stringMatching(/^[a-z0-9 _-]{1,20}$/), weight: 4 },
      { arbitrary: specials, weight: 2 },
      { arbitrary: fc.string({ unit: codeUnit, maxLength: 20 }), weight: 1 },
      { arbitrary: fc.string({ maxLength: 20 }), weight: 1 },
    );
    const usually = <T>(valid: fc.Arbitrary<T>, other: fc.Arbitrary<unknown>) => fc.oneof({ arbitrary: valid, weight: 5 }, { arbitrary: other, weight: 1 });
    const anyNumber = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(Number.MAX_SAFE_INTEGER + 2, -0, 1e308));
    const { json } = fc.letrec<{ json: unknown }>((tie) => ({
      json: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        anyString,
        anyNumber,
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('json'), { maxLength: 4 }),
        fc.dictionary(anyString, tie('json'), { maxKeys: 4 }),
      ),
    }));
    const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });

    const jobBody = fc.oneof(
      { arbitrary: json, weight: 1 },
      {
        weight: 4,
        arbitrary: fc.record(
          {
            type: usually(fc.constant('doc_review'), anyString),
            input: usually(
              fc.record({
                question: usually(anyString, json),
                documents: usually(fc.array(fc.record({ id: usually(anyString, json), text: usually(anyString, json) }), { minLength: 1, maxLength: 3 }), json),
              }),
              json,
            ),
            meta: usually(
              fc.record(
                { sensitivity: usually(fc.constantFrom('public', 'internal', 'sensitive'), anyString), business_type: anyString, tags: fc.array(anyString, { maxLength: 3 }) },
                { requiredKeys: [] },
              ),
              json,
            ),
          },
          { requiredKeys: ['type', 'input'] },
        ),
      },
    );
    const message = fc.record({
      role: usually(fc.constantFrom('system', 'developer', 'user', 'assistant'), anyString),
      content: usually(anyString, fc.oneof(json, fc.array(fc.record({ type: fc.constant('text'), text: anyString }), { maxLength: 2 }))),
    });
    const chatBody = fc.oneof(
      { arbitrary: json, weight: 1 },
      {
        weight: 4,
        arbitrary: fc.record(
          {
            model: usually(anyString, json),
            messages: usually(fc.array(message, { minLength: 1, maxLength: 3 }), json),
            temperature: usually(fc.double({ min: 0, max: 2, noNaN: true }), fc.oneof(anyNumber, json)),
            max_tokens: usually(fc.integer({ min: 1, max: 64 }), json),
            response_format: usually(fc.record({ type: fc.constantFrom('text', 'json_object'), extra: json }), json),
            metadata: usually(fc.dictionary(fc.constantFrom('task_type', 'complexity', 'sensitivity', 'business_type', 'tags', 'timeout_ms', 'priority'), anyString, { maxKeys: 4 }), json),
            stream: fc.boolean(),
          },
          { requiredKeys: ['messages'] },
        ),
      },
    );
    /** What JSON.stringify never writes: huge number literals, duplicate keys, deep nesting, cut-off text. */
    const rawText = (body: fc.Arbitrary<unknown>) =>
      fc.oneof(
        { arbitrary: body.map((value) => JSON.stringify(value) ?? 'null'), weight: 6 },
        fc
          .constantFrom('1e400', '-1e400', '123456789012345678901234567890', '0.0000000000000000000000001')
          .map((n) => `{"type": "doc_review", "input": {"question": ${n}, "documents": [{"id": "a", "text": "t"}]}, "meta": {"tags": [${n}]}, "max_tokens": ${n}, "messages": [{"role": "user", "content": ${n}}]}`),
        fc.tuple(anyString, anyString).map(([a, b]) => `{"type": "doc_review", "type": ${JSON.stringify(a)}, "messages": [{"role": "user", "content": "x"}], "messages": ${JSON.stringify(b)}}`),
        fc.integer({ min: 1, max: 3_000 }).map((depth) => `{"messages": [{"role": "user", "content": "x"}], "input": ${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`),
        body.chain((value) => {
          const text = JSON.stringify(value) ?? 'null';
          return fc.integer({ min: 0, max: text.length }).map((cut) => text.slice(0, cut));
        }),
      );
    const idempotencyKey = maybe(fc.stringMatching(/^[A-Za-z0-9-]{1,32}$/));

    it('on POST /v1/jobs', async () => {
      await fc.assert(
        fc.asyncProperty(rawText(jobBody), idempotencyKey, async (body, key) => {
          expectWellFormedAnswer(await send('POST', '/v1/jobs', body, key ? { 'idempotency-key': key } : {}), `POST /v1/jobs ${body.slice(0, 200)}`);
        }),
        { numRuns: 200 },
      );
    });

    it('on POST /v1/chat/completions', async () => {
      await fc.assert(
        fc.asyncProperty(rawText(chatBody), idempotencyKey, async (body, key) => {
          expectWellFormedAnswer(await send('POST', '/v1/chat/completions', body, key ? { 'idempotency-key': key } : {}), `POST /v1/chat/completions ${body.slice(0, 200)}`);
        }),
        { numRuns: 200 },
      );
    });

    it('on the job reads (ids and query strings)', async () => {
      await fc.assert(
        fc.asyncProperty(anyString, anyString, async (id, cursor) => {
          expectWellFormedAnswer(await send('GET', `/v1/jobs/${encodeAny(id)}`), `GET /v1/jobs/${id}`);
          expectWellFormedAnswer(await send('GET', `/v1/jobs?status=${encodeAny(id)}&cursor=${encodeAny(cursor)}`), `GET /v1/jobs?cursor=${cursor}`);
        }),
        { numRuns: 60 },
      );
    });

    it('and afterwards the process is up, nothing failed unexpectedly, and the ledger writes', async () => {
      expect(stack.supervisor.running).toBe(true);
      expect((await send('GET', '/healthz')).status).toBe(200);
      await expectLedgerWrites();
      const text = await metrics();
      expect(metric(text, 'switchyard_ledger_failed_writes_total')).toBe(0);
      expect(metric(text, 'switchyard_ledger_rows_dropped_total')).toBe(0);
      expect(stack.supervisor.output.join('\n')).not.toMatch(/"request failed"/);
    });
  });
});
