import { APIConnectionError, InternalServerError, RateLimitError } from 'openai';
import { chatBody, CLOUD, LOCAL, rawRequest, type RunningSim, startSim } from '../test/sim-harness';

const ask = (running: RunningSim, target: typeof LOCAL | typeof CLOUD, content = 'Is the cache warm? It was flushed.') =>
  running.client(target.name).chat.completions.create({ model: target.model, messages: [{ role: 'user', content }] });

async function outcomesOf(running: RunningSim, target: typeof LOCAL, requests: number): Promise<string[]> {
  const outcomes: string[] = [];
  for (let i = 0; i < requests; i += 1) {
    try {
      await ask(running, target);
      outcomes.push('ok');
    } catch (error) {
      if (!(error instanceof InternalServerError)) throw error;
      outcomes.push('error');
    }
  }
  return outcomes;
}

describe('llm-sim fault modes', () => {
  let running: RunningSim;

  beforeEach(async () => {
    running = await startSim();
  });
  afterEach(async () => {
    await running.sim.stop();
  });

  it('error: 500 with an OpenAI error body, the SDK throws; health turns 503', async () => {
    await running.setMode(LOCAL.name, { mode: 'error' });
    const call = ask(running, LOCAL);
    await expect(call).rejects.toBeInstanceOf(InternalServerError);
    await expect(call).rejects.toMatchObject({ status: 500, type: 'server_error' });
    const health = await rawRequest(running.portOf(LOCAL.name), 'GET', '/health');
    expect(health.status).toBe(503);
    // Other targets are unaffected.
    await expect(ask(running, CLOUD)).resolves.toMatchObject({ object: 'chat.completion' });
  });

  it('ratelimit: 429 with Retry-After (default 1, configurable)', async () => {
    await running.setMode(LOCAL.name, { mode: 'ratelimit' });
    const error: unknown = await ask(running, LOCAL).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).status).toBe(429);
    expect((error as RateLimitError).headers.get('retry-after')).toBe('1');
    expect((error as RateLimitError).code).toBe('rate_limit_exceeded');

    await running.setMode(LOCAL.name, { mode: 'ratelimit', retry_after_s: 7 });
    const raw = await rawRequest(running.portOf(LOCAL.name), 'POST', '/v1/chat/completions', chatBody(LOCAL.model, 'x', { stream: true }));
    expect(raw.status).toBe(429);
    expect(raw.headers['retry-after']).toBe('7');
    expect(JSON.parse(raw.body).error.code).toBe('rate_limit_exceeded');
  });

  it('hang: the client times out, the call is logged, and stop() still completes', async () => {
    await running.setMode(LOCAL.name, { mode: 'hang' });
    const client = running.client(LOCAL.name, { timeout: 200 });
    const started = Date.now();
    const error: unknown = await client.chat.completions.create({ model: LOCAL.model, messages: [{ role: 'user', content: 'x' }] }).catch((caught: unknown) => caught);
    // Plain node gets APIConnectionTimeoutError here. Under jest the abort error comes from
    // another realm, fails the SDK's `instanceof Error`, and surfaces as its parent class.
    expect(error).toBeInstanceOf(APIConnectionError);
    expect((error as APIConnectionError).status).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    // A second hung request still open while the simulator stops.
    const pending = rawRequest(running.portOf(LOCAL.name), 'POST', '/v1/chat/completions', chatBody(LOCAL.model, 'still waiting'));
    const { json } = await running.control('GET', `/calls?target=${LOCAL.name}`);
    expect((json as { calls: { status: unknown; outcome: string }[] }).calls[0]).toMatchObject({ status: 'hang', outcome: 'hang' });
    await waitFor(async () => ((await running.control('GET', '/calls')).json as { calls: unknown[] }).calls.length === 2);
    await running.sim.stop();
    await expect(pending).rejects.toThrow(/socket hang up|ECONNRESET/);
  });

  it('slow: the first byte arrives no earlier than delay_ms, plain and streaming', async () => {
    const delay = 150;
    await running.setMode(LOCAL.name, { mode: 'slow', delay_ms: delay });
    const plain = await rawRequest(running.portOf(LOCAL.name), 'POST', '/v1/chat/completions', chatBody(LOCAL.model, 'slowly'));
    expect(plain.status).toBe(200);
    expect(plain.firstByteMs).toBeGreaterThanOrEqual(delay);
    expect(JSON.parse(JSON.parse(plain.body).choices[0].message.content).conclusion).toBe('[local_vllm_7b] slowly');

    const streamed = await rawRequest(running.portOf(LOCAL.name), 'POST', '/v1/chat/completions', chatBody(LOCAL.model, 'slowly', { stream: true }));
    expect(streamed.firstByteMs).toBeGreaterThanOrEqual(delay);
    expect(streamed.body.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('records a caller that hangs up mid-stream as client_gone, and a finished call as not', async () => {
    await running.setMode(LOCAL.name, { mode: 'slow', delay_ms: 1000 });
    const abort = new AbortController();
    const stream = await running
      .client(LOCAL.name)
      .chat.completions.create({ model: LOCAL.model, messages: [{ role: 'user', content: 'hang up on me' }], stream: true }, { signal: abort.signal });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) abort.abort();
    }
    await running.setMode(LOCAL.name, { mode: 'ok' });
    await ask(running, LOCAL, 'hear me out');
    const calls = async () => ((await running.control('GET', '/calls')).json as { calls: { last_user_message_preview: string; client_gone: boolean }[] }).calls;
    for (let i = 0; i < 50 && !(await calls()).find((c) => c.last_user_message_preview === 'hang up on me')?.client_gone; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const byText = Object.fromEntries((await calls()).map((c) => [c.last_user_message_preview, c.client_gone]));
    expect(byText).toEqual({ 'hang up on me': true, 'hear me out': false });
  });

  it('garbage: 200 whose content is not JSON, plain and streaming', async () => {
    await running.setMode(LOCAL.name, { mode: 'garbage' });
    const completion = await ask(running, LOCAL);
    const content = completion.choices[0]?.message.content ?? '';
    expect(content.length).toBeGreaterThan(0);
    expect(() => JSON.parse(content)).toThrow();

    const stream = await running.client(LOCAL.name).chat.completions.create({ model: LOCAL.model, messages: [{ role: 'user', content: 'x' }], stream: true });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? '';
    expect(streamed).toMatch(/^Sure!/);
    expect(() => JSON.parse(streamed)).toThrow();
  });

  it('wrong: 200 with the usual well-formed answer whose facts are wrong; health stays ok; switchable at run time', async () => {
    const question = 'Extract the order number.\n\nOrder ORD-58213 came to 1,240.50 EUR and is overdue.';
    const right = JSON.parse((await ask(running, LOCAL, question)).choices[0]?.message.content ?? '') as { conclusion: string; confidence: number };
    expect(right.conclusion).toContain('ORD-58213');

    await running.setMode(LOCAL.name, { mode: 'wrong' });
    const content = (await ask(running, LOCAL, question)).choices[0]?.message.content ?? '';
    const wrong = JSON.parse(content) as { conclusion: string; evidence: string[]; confidence: number };
    expect(wrong.conclusion).toContain('ORD-03768');
    expect(wrong.conclusion).toContain('6,795.05 EUR and is paid');
    expect(wrong.conclusion).not.toContain('58213');
    expect(wrong.confidence).toBeGreaterThan(0);
    expect((await rawRequest(running.portOf(LOCAL.name), 'GET', '/health')).status).toBe(200);
    const { json } = await running.control('GET', '/targets');
    expect((json as { targets: { name: string; calls: Record<string, number> }[] }).targets.find((t) => t.name === LOCAL.name)!.calls.wrong).toBe(1);

    await running.setMode(LOCAL.name, { mode: 'ok' });
    expect((await ask(running, LOCAL, question)).choices[0]?.message.content).toContain('ORD-58213');
  });

  it('down: connections are refused, then ok re-listens on the same port', async () => {
    const port = running.portOf(LOCAL.name);
    await ask(running, LOCAL); // leaves a keep-alive connection in the SDK's pool
    await running.setMode(LOCAL.name, { mode: 'down' });
    await expect(rawRequest(port, 'GET', '/health')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await expect(ask(running, LOCAL)).rejects.toBeInstanceOf(APIConnectionError);
    const { json } = await running.control('GET', '/targets');
    expect((json as { targets: { name: string; listening: boolean; mode: string }[] }).targets.find((t) => t.name === LOCAL.name)).toMatchObject({ mode: 'down', listening: false });

    await running.setMode(LOCAL.name, { mode: 'ok' });
    expect(running.portOf(LOCAL.name)).toBe(port);
    const completion = await ask(running, LOCAL);
    expect(completion.choices[0]?.finish_reason).toBe('stop');
  });

  it('count: the fault applies to the next N requests, then the target is ok again', async () => {
    await running.setMode(LOCAL.name, { mode: 'error', count: 2 });
    expect(await outcomesOf(running, LOCAL, 4)).toEqual(['error', 'error', 'ok', 'ok']);
    const { json } = await running.control('GET', '/targets');
    expect((json as { targets: { name: string; mode: string }[] }).targets.find((t) => t.name === LOCAL.name)?.mode).toBe('ok');
  });

  it('fail_ratio: faults are spread deterministically (0.5 = every 2nd, 0.25 = every 4th)', async () => {
    await running.setMode(LOCAL.name, { mode: 'error', fail_ratio: 0.5 });
    expect(await outcomesOf(running, LOCAL, 6)).toEqual(['ok', 'error', 'ok', 'error', 'ok', 'error']);
    await running.setMode(LOCAL.name, { mode: 'error', fail_ratio: 0.25 });
    expect(await outcomesOf(running, LOCAL, 8)).toEqual(['ok', 'ok', 'ok', 'error', 'ok', 'ok', 'ok', 'error']);
    await running.setMode(LOCAL.name, { mode: 'error', fail_ratio: 0 });
    expect(await outcomesOf(running, LOCAL, 3)).toEqual(['ok', 'ok', 'ok']);
  });

  it('fail_ratio with count: the ratio applies inside the window of N requests', async () => {
    await running.setMode(LOCAL.name, { mode: 'error', fail_ratio: 0.5, count: 4 });
    expect(await outcomesOf(running, LOCAL, 6)).toEqual(['ok', 'error', 'ok', 'error', 'ok', 'ok']);
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
