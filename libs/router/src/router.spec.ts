import type { ServerResponse } from 'node:http';
import { RequestMetaSchema, type RequestMetaInput } from '@switchyard/contracts';
import { estimateTokens } from './calls/estimate-tokens';
import { CallAbortedError, RouterCallError } from './calls/router-call.error';
import { NoEligibleTargetError } from './routing/no-eligible-target.error';
import { dailyBudgetSpentFilter } from './routing/candidate-filter';
import { answer, closeFakeUpstreams, closedPort, completion, fail, fakeUpstream, hang, routerFor } from './testing/fake-upstream';

const meta = (input: RequestMetaInput = {}) => RequestMetaSchema.parse(input);
const messages = [
  { role: 'system' as const, content: 'You summarise.' },
  { role: 'user' as const, content: 'Summarise this document.' },
];

async function callError(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

afterEach(closeFakeUpstreams);

describe('Router.chat', () => {
  it('returns content, usage and cost, and forwards headers, options and the key', async () => {
    const cloud = await fakeUpstream(answer('{"conclusion":"ok"}'));
    const router = routerFor([{ name: 'cloud_a', port: cloud.port, type: 'cloud', extra: '\n      api_key_env: CLOUD_KEY' }], {
      secrets: { CLOUD_KEY: 'sk-test-123' },
    });

    const result = await router.chat({
      meta: meta({ task_type: 'summarize', max_output_tokens: 400 }),
      messages,
      temperature: 0.2,
      jsonMode: true,
      headers: { 'x-switchyard-task': 'task-1', 'x-switchyard-step': '2', 'x-switchyard-idempotency-key': 'task-1:2' },
    });

    expect(result).toMatchObject({
      content: '{"conclusion":"ok"}',
      target: 'cloud_a',
      model: 'cloud_a-model',
      rule: 'primary',
      usage: { inputTokens: 1200, outputTokens: 300, estimated: false },
    });
    expect(result.costUsd).toBeCloseTo((1200 * 0.001 + 300 * 0.002) / 1000, 12);
    expect(result.attempts).toEqual([expect.objectContaining({ target: 'cloud_a', rule: 'primary', outcome: 'ok' })]);
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);

    const [request] = cloud.received;
    expect(request!.path).toBe('/v1/chat/completions');
    expect(request!.headers).toMatchObject({
      'x-switchyard-task': 'task-1',
      'x-switchyard-step': '2',
      'x-switchyard-idempotency-key': 'task-1:2',
      authorization: 'Bearer sk-test-123',
    });
    expect(request!.body).toMatchObject({
      model: 'cloud_a-model',
      messages,
      max_tokens: 400,
      temperature: 0.2,
      response_format: { type: 'json_object' },
    });
    // Always streamed: the router watches for the first token.
    expect(request!.body.stream).toBe(true);
  });

  it('sends "not-needed" to a local target without a key and estimates missing usage', async () => {
    const local = await fakeUpstream(completion('hello there', null));
    const router = routerFor([{ name: 'local_a', port: local.port, extra: '\n      api_key_env: LOCAL_KEY' }]);
    const result = await router.chat({ meta: meta(), messages: [{ role: 'user', content: 'x'.repeat(40) }] });
    expect(local.received[0]!.headers.authorization).toBe('Bearer not-needed');
    expect(local.received[0]!.body).not.toHaveProperty('response_format');
    // The input approximated as bytes ÷ 4 plus the per-message overhead (no limit depends on it);
    // the output counted with the o200k tokenizer.
    expect(result.usage).toEqual({ inputTokens: 10 + 4, outputTokens: 2, estimated: true });
  });

  it('sends a json_schema response_format as given, and counts a reply that is not JSON as bad output', async () => {
    const local = await fakeUpstream(answer('not json at all'));
    const router = routerFor([{ name: 'local_a', port: local.port }]);
    const responseFormat = {
      type: 'json_schema' as const,
      json_schema: { name: 'triage', strict: true, schema: { type: 'object', required: ['severity'], properties: { severity: { type: 'string' } } } },
    };
    await router.chat({ meta: meta(), messages, responseFormat });
    expect(local.received[0]!.body.response_format).toEqual(responseFormat);
    expect(router.snapshot().find((t) => t.name === 'local_a')!.score).toBeLessThan(100);
  });

  it('fails over to the next target on a 500, without SDK retries', async () => {
    const first = await fakeUpstream(fail(500));
    const second = await fakeUpstream(answer('from second'));
    const router = routerFor([
      { name: 'first', port: first.port },
      { name: 'second', port: second.port },
    ]);

    const result = await router.chat({ meta: meta(), messages });

    expect(result.content).toBe('from second');
    expect(result.target).toBe('second');
    expect(first.received).toHaveLength(1);
    expect(result.attempts).toEqual([
      expect.objectContaining({ target: 'first', outcome: 'error', errorClass: 'server', status: 500 }),
      expect.objectContaining({ target: 'second', outcome: 'ok', rule: 'primary' }),
    ]);
  });

  it('reads the upstream’s x-ratelimit headers: a target that says no requests are left is skipped until its reset', async () => {
    const limited = (res: ServerResponse, body: Record<string, unknown>) => {
      res.setHeader('x-ratelimit-remaining-requests', '0');
      res.setHeader('x-ratelimit-reset-requests', '6m0s');
      res.setHeader('x-ratelimit-remaining-tokens', '149000');
      res.setHeader('x-ratelimit-reset-tokens', '20ms');
      answer('from first')(res, body);
    };
    const first = await fakeUpstream(limited);
    const second = await fakeUpstream(answer('from second'));
    const router = routerFor([
      { name: 'first', port: first.port },
      { name: 'second', port: second.port },
    ]);

    expect((await router.chat({ meta: meta(), messages })).target).toBe('first');
    expect((await router.chat({ meta: meta(), messages })).target).toBe('second');
    expect(first.received).toHaveLength(1);
    expect(router.explain(meta()).candidates).toEqual(expect.arrayContaining([expect.objectContaining({ target: 'first', eligible: false, reason: 'rpm_quota' })]));
  });

  it('does not fail over on a 400', async () => {
    const first = await fakeUpstream(fail(400));
    const second = await fakeUpstream(answer('never'));
    const router = routerFor([
      { name: 'first', port: first.port },
      { name: 'second', port: second.port },
    ]);

    const error = await callError(router.chat({ meta: meta(), messages }));

    expect(error).toBeInstanceOf(RouterCallError);
    const callError_ = error as RouterCallError;
    expect(callError_.retryable).toBe(false);
    expect(callError_.lastErrorClass).toBe('bad_request');
    expect(callError_.attempts).toEqual([expect.objectContaining({ target: 'first', errorClass: 'bad_request', status: 400 })]);
    expect(callError_.cause).toMatchObject({ name: 'UpstreamError', errorClass: 'bad_request', status: 400 });
    expect(second.received).toHaveLength(0);
  });

  it('classifies a refused connection as network and fails over', async () => {
    const second = await fakeUpstream(answer('from second'));
    const router = routerFor([
      { name: 'down', port: await closedPort() },
      { name: 'second', port: second.port },
    ]);

    const result = await router.chat({ meta: meta(), messages });

    expect(result.target).toBe('second');
    expect(result.attempts[0]).toMatchObject({ target: 'down', outcome: 'error', errorClass: 'network' });
  });

  it('classifies a hang beyond the target timeout as timeout and fails over', async () => {
    const stuck = await fakeUpstream(hang);
    const second = await fakeUpstream(answer('from second'));
    const router = routerFor([
      { name: 'stuck', port: stuck.port, extra: '\n      timeout_ms: 200' },
      { name: 'second', port: second.port },
    ]);

    const result = await router.chat({ meta: meta(), messages });

    expect(result.target).toBe('second');
    expect(result.attempts[0]).toMatchObject({ target: 'stuck', errorClass: 'timeout', message: 'no first token within 200 ms' });
    expect(result.attempts[0]!.latencyMs).toBeGreaterThanOrEqual(190);
    expect(result.attempts[0]!.latencyMs).toBeLessThan(2000);
  });

  it('times out a body that stalls after the headers', async () => {
    const stalls = await fakeUpstream((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":"x",');
    });
    const router = routerFor([{ name: 'stalls', port: stalls.port, extra: '\n      timeout_ms: 200' }]);
    const error = (await callError(router.chat({ meta: meta(), messages }))) as RouterCallError;
    expect(error.attempts.map((a) => a.errorClass)).toEqual(['timeout']);
  });

  it('classifies an upstream that drops the connection mid-stream as network and fails over', async () => {
    const drops = await fakeUpstream((res, body) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const frame = { id: 'x', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta: { content: 'half an ans' }, finish_reason: null }] };
      res.write(`data: ${JSON.stringify(frame)}\n\n`, () => res.socket?.destroy());
    });
    const next = await fakeUpstream(answer('complete answer'));
    const router = routerFor([
      { name: 'drops', port: drops.port },
      { name: 'next', port: next.port },
    ]);
    const result = await router.chat({ meta: meta(), messages });
    expect(result.content).toBe('complete answer');
    expect(result.attempts.map((a) => [a.target, a.errorClass])).toEqual([
      ['drops', 'network'],
      ['next', undefined],
    ]);
  });

  it('times out a stream that stalls after its first tokens instead of returning the part it has', async () => {
    const stalls = await fakeUpstream((res, body) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const frame = { id: 'x', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta: { content: 'the first half' }, finish_reason: null }] };
      res.write(`data: ${JSON.stringify(frame)}\n\n`);
    });
    const next = await fakeUpstream(answer('complete answer'));
    const router = routerFor([
      { name: 'stalls', port: stalls.port, extra: '\n      timeout_ms: 300' },
      { name: 'next', port: next.port },
    ]);
    const result = await router.chat({ meta: meta(), messages });
    expect(result.content).toBe('complete answer');
    expect(result.attempts.map((a) => [a.target, a.errorClass])).toEqual([
      ['stalls', 'timeout'],
      ['next', undefined],
    ]);
  });

  it.each([
    [429, 'rate_limited'],
    [401, 'auth'],
    [503, 'server'],
  ] as const)('fails over after a %i (%s)', async (status, errorClass) => {
    const first = await fakeUpstream(fail(status));
    const second = await fakeUpstream(answer('ok'));
    const router = routerFor([
      { name: 'first', port: first.port },
      { name: 'second', port: second.port },
    ]);
    const result = await router.chat({ meta: meta(), messages });
    expect(result.attempts.map((a) => [a.target, a.errorClass])).toEqual([
      ['first', errorClass],
      ['second', undefined],
    ]);
  });

  it('stops at max_attempts_per_call and reports every attempt, retryable', async () => {
    const upstreams = await Promise.all([fail(500), fail(502), fail(503)].map((b) => fakeUpstream(b)));
    const router = routerFor(
      upstreams.map((u, i) => ({ name: `t${i}`, port: u.port })),
      { maxAttempts: 2 },
    );
    const error = (await callError(router.chat({ meta: meta(), messages }))) as RouterCallError;
    expect(error).toBeInstanceOf(RouterCallError);
    expect(error.retryable).toBe(true);
    expect(error.lastErrorClass).toBe('server');
    expect(error.attempts.map((a) => [a.target, a.status])).toEqual([
      ['t0', 500],
      ['t1', 502],
    ]);
    expect(upstreams[2]!.received).toHaveLength(0);
    expect(error.message).toMatch(/after 2 attempts/);
  });

  it('stops when no other target is eligible', async () => {
    const only = await fakeUpstream(fail(500));
    const router = routerFor([{ name: 'only', port: only.port }]);
    const error = (await callError(router.chat({ meta: meta(), messages }))) as RouterCallError;
    expect(error).toBeInstanceOf(RouterCallError);
    expect(error.attempts).toHaveLength(1);
    expect(error.message).toMatch(/no other eligible target/);
  });

  it('never fails a sensitive call over to the cloud', async () => {
    const local = await fakeUpstream(fail(500));
    const cloud = await fakeUpstream(answer('leaked'));
    const router = routerFor(
      [
        { name: 'local_a', port: local.port },
        { name: 'cloud_a', port: cloud.port, type: 'cloud' },
      ],
      {
        routes: `
    - {name: leak, when: {sensitivity: sensitive}, targets: [local_a, cloud_a], priority: 10}
    - {name: fallback, when: {all_else: true}, target: cloud_a, priority: 1}`,
      },
    );
    const error = (await callError(router.chat({ meta: meta({ sensitivity: 'sensitive' }), messages }))) as RouterCallError;
    expect(error).toBeInstanceOf(RouterCallError);
    expect(error.attempts.map((a) => a.target)).toEqual(['local_a']);
    expect(cloud.received).toHaveLength(0);
  });

  it('applies the caller-scoped filters: a tenant over budget goes to local targets, another tenant still to the cloud', async () => {
    const local = await fakeUpstream(answer('local answer'));
    const cloud = await fakeUpstream(answer('cloud answer'));
    const seen: unknown[] = [];
    const router = routerFor(
      [
        { name: 'local_a', port: local.port },
        { name: 'cloud_a', port: cloud.port, type: 'cloud' },
      ],
      {
        routes: `
    - {name: reasoning, when: {complexity: high}, target: cloud_a, priority: 10}
    - {name: fallback, when: {all_else: true}, target: local_a, priority: 1}`,
        contextFilters: async (context) => {
          seen.push(context);
          return context.tenantId === 'spent' ? [dailyBudgetSpentFilter] : [];
        },
      },
    );
    const spent = await router.chat({ meta: meta({ complexity: 'high' }), messages, context: { tenantId: 'spent', jobId: 'j1' } });
    expect(spent.target).toBe('local_a');
    const other = await router.chat({ meta: meta({ complexity: 'high' }), messages, context: { tenantId: 'fine' } });
    expect(other.target).toBe('cloud_a');
    expect(cloud.received).toHaveLength(1);
    expect(seen).toEqual([{ tenantId: 'spent', jobId: 'j1' }, { tenantId: 'fine' }]);
  });

  it('tells a streaming caller which filters held targets back before it hands out the first piece', async () => {
    const local = await fakeUpstream(answer('local answer'));
    const cloud = await fakeUpstream(answer('cloud answer'));
    const router = routerFor(
      [
        { name: 'local_a', port: local.port },
        { name: 'cloud_a', port: cloud.port, type: 'cloud' },
      ],
      {
        routes: `
    - {name: reasoning, when: {complexity: high}, target: cloud_a, priority: 10}
    - {name: fallback, when: {all_else: true}, target: local_a, priority: 1}`,
        contextFilters: async () => [dailyBudgetSpentFilter],
      },
    );
    const pieces: { target: string; restrictedBy: readonly string[] | undefined }[] = [];
    const result = await router.chat({
      meta: meta({ complexity: 'high' }),
      messages,
      context: { tenantId: 'spent' },
      passThrough: { includeUsage: false, assemble: false, onEvents: (_sse, target, restrictedBy) => pieces.push({ target, restrictedBy }) },
    });
    expect(result.restrictedBy).toEqual(['daily_budget_spent']);
    expect(pieces.length).toBeGreaterThan(0);
    expect(pieces[0]).toEqual({ target: 'local_a', restrictedBy: result.restrictedBy });
  });

  it('throws a retryable NoEligibleTargetError when every target is excluded', async () => {
    const router = routerFor([{ name: 'only', port: await closedPort() }]);
    const error = await callError(router.chat({ meta: meta(), messages, excludeTargets: ['only'] }));
    expect(error).toBeInstanceOf(NoEligibleTargetError);
    expect((error as NoEligibleTargetError).retryable).toBe(true);
  });

  it('drops a cloud target whose key variable is unset', async () => {
    const cloud = await fakeUpstream(answer('from cloud'));
    const local = await fakeUpstream(answer('from local'));
    const router = routerFor([
      { name: 'cloud_a', port: cloud.port, type: 'cloud', extra: '\n      api_key_env: CLOUD_KEY' },
      { name: 'local_a', port: local.port },
    ]);
    expect(router.decide(meta()).candidates[0]).toEqual({ target: 'cloud_a', rule: 'primary', eligible: false, reason: 'missing_api_key' });
    const result = await router.chat({ meta: meta(), messages });
    expect(result.target).toBe('local_a');
    expect(cloud.received).toHaveLength(0);
  });

  it('skips a target whose context window the estimated input would fill past 80 %', async () => {
    const small = await fakeUpstream(answer('small'));
    const big = await fakeUpstream(answer('big'));
    const router = routerFor([
      { name: 'small', port: small.port, contextWindow: 1000 },
      { name: 'big', port: big.port },
    ]);
    expect(router.decide(meta({ estimated_input_tokens: 900 })).candidates[0]).toMatchObject({ target: 'small', reason: 'context_window' });
    const words = Array.from({ length: 900 }, (_, i) => `word${i}`).join(' ');
    const result = await router.chat({ meta: meta(), messages: [{ role: 'user', content: words }] });
    expect(result.target).toBe('big');
    expect(small.received).toHaveLength(0);
  });

  it('counts the input exactly when its byte size passes a context limit, and routes on that count', async () => {
    const small = await fakeUpstream(answer('small'));
    const big = await fakeUpstream(answer('big'));
    const router = routerFor([
      { name: 'small', port: small.port, contextWindow: 1000 },
      { name: 'big', port: big.port },
    ]);
    // 1,500 bytes (past small's 800-token limit as a bound) but about 300 tokens: small still takes it.
    const text = 'the warranty '.repeat(115);
    const result = await router.chat({ meta: meta(), messages: [{ role: 'user', content: text }] });
    expect(result.target).toBe('small');
  });

  it('approximates a long input without tokenizing when no limit depends on it: bytes ÷ 4, the estimate an answer without usage is charged', async () => {
    const upstream = await fakeUpstream(completion('{"ok": true}', null));
    const router = routerFor([{ name: 'only', port: upstream.port }]);
    const text = 'Ünïcode prose of a user, 二十个字符 and a few more words here. '.repeat(30);
    const result = await router.chat({ meta: meta(), messages: [{ role: 'user', content: text }] });
    expect(result.usage).toMatchObject({ inputTokens: Math.ceil(Buffer.byteLength(text) / 4) + 4, estimated: true });
  });

  it('counts the input exactly when a target charges tokens to a tpm quota', async () => {
    const upstream = await fakeUpstream(completion('{"ok": true}', null));
    const router = routerFor([{ name: 'only', port: upstream.port, extra: '\n      tpm: 1000000' }]);
    const text = 'Ünïcode prose of a user, 二十个字符 and a few more words here. '.repeat(30);
    const result = await router.chat({ meta: meta(), messages: [{ role: 'user', content: text }] });
    expect(result.usage).toMatchObject({ inputTokens: estimateTokens([{ content: text }]), estimated: true });
  });

  it('stops at once when the caller aborts', async () => {
    const stuck = await fakeUpstream(hang);
    const second = await fakeUpstream(answer('never'));
    const router = routerFor([
      { name: 'stuck', port: stuck.port },
      { name: 'second', port: second.port },
    ]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('job cancelled')), 100);
    const error = (await callError(router.chat({ meta: meta(), messages, signal: controller.signal }))) as CallAbortedError;
    expect(error).toBeInstanceOf(CallAbortedError);
    expect(error.retryable).toBe(false);
    expect(error.attempts).toEqual([expect.objectContaining({ target: 'stuck', message: 'aborted by the caller' })]);
    expect(second.received).toHaveLength(0);
  });

  it('bounds the whole call by meta.timeout_ms', async () => {
    const stuck = await fakeUpstream(hang);
    const second = await fakeUpstream(hang);
    const router = routerFor([
      { name: 'stuck', port: stuck.port },
      { name: 'second', port: second.port },
    ]);
    const started = Date.now();
    const error = (await callError(router.chat({ meta: meta({ timeout_ms: 300 }), messages }))) as RouterCallError;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(error.lastErrorClass).toBe('timeout');
    expect(error.attempts.every((a) => a.errorClass === 'timeout')).toBe(true);
  });
});
