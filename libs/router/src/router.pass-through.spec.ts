import type { ServerResponse } from 'node:http';
import { RequestMetaSchema } from '@switchyard/contracts';
import { RouterCallError } from './calls/router-call.error';
import type { AttemptEvent } from './observe/call-observer';
import { answer, closeFakeUpstreams, fail, fakeUpstream, routerFor, type Behaviour } from './testing/fake-upstream';

/** The gateway's path: calls go out without the SDK and the upstream's own events are handed on. */
const messages = [{ role: 'user' as const, content: 'Summarise this document.' }];

const frame = (body: Record<string, unknown>, delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** Sends the role chunk and then nothing: the first token never comes. */
const roleThenSilence: Behaviour = (res, body) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(frame(body, { role: 'assistant', content: '' }));
};

/** Sends the role chunk and a first piece of content, then drops the connection. */
const cutAfterFirstToken: Behaviour = (res: ServerResponse, body) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(frame(body, { role: 'assistant', content: '' }) + frame(body, { content: 'The first half' }));
  setTimeout(() => res.socket?.destroy(), 20);
};

function collect() {
  const handedOn: { sse: string; target: string }[] = [];
  return { handedOn, onEvents: (sse: string, target: string) => handedOn.push({ sse, target }) };
}

afterEach(closeFakeUpstreams);

describe('Router.chat with a pass-through (the gateway path)', () => {
  it('hands the upstream events on and puts the usage of the final chunk in the ledger event, without assembling the answer', async () => {
    const upstream = await fakeUpstream(answer('relayed!', { prompt_tokens: 1200, completion_tokens: 300 }));
    const events: AttemptEvent[] = [];
    const router = routerFor([{ name: 'a', port: upstream.port }], { observers: [{ onAttempt: (event) => events.push(event) }] });
    const { handedOn, onEvents } = collect();

    const result = await router.chat({ meta: RequestMetaSchema.parse({}), messages, maxTokens: 64, passThrough: { includeUsage: false, assemble: false, onEvents } });

    expect(result).toMatchObject({ target: 'a', content: '', usage: { inputTokens: 1200, outputTokens: 300, estimated: false } });
    expect(events).toEqual([expect.objectContaining({ outcome: 'ok', usage: { inputTokens: 1200, outputTokens: 300, estimated: false } })]);
    expect(events[0]!.costUsd).toBeCloseTo((1200 * 0.001 + 300 * 0.002) / 1000, 12);
    const text = handedOn.map((piece) => piece.sse).join('');
    expect(text).toContain('"content":"relayed!"');
    expect(text).not.toContain('"usage"');
    expect(text).not.toContain('[DONE]');
    // The request went out as the router builds it: streamed, with usage asked for.
    expect(upstream.received[0]!.body).toMatchObject({ model: 'a-model', stream: true, stream_options: { include_usage: true }, max_tokens: 64, messages });
  });

  it('fails over on a 429 before the first byte: the caller only ever sees the next target’s events', async () => {
    const limited = await fakeUpstream(fail(429));
    const healthy = await fakeUpstream(answer('from b'));
    const router = routerFor([
      { name: 'a', port: limited.port },
      { name: 'b', port: healthy.port },
    ]);
    const { handedOn, onEvents } = collect();

    const result = await router.chat({ meta: RequestMetaSchema.parse({ complexity: 'low' }), messages, passThrough: { includeUsage: true, assemble: true, onEvents } });

    expect(result).toMatchObject({ target: 'b', content: 'from b' });
    expect(result.attempts.map((attempt) => [attempt.target, attempt.errorClass])).toEqual([
      ['a', 'rate_limited'],
      ['b', undefined],
    ]);
    expect(new Set(handedOn.map((piece) => piece.target))).toEqual(new Set(['b']));
    expect(handedOn.map((piece) => piece.sse).join('')).toContain('"usage"');
  });

  it('fails over when the first token is late, and the late target’s role chunk never reaches the caller', async () => {
    const silent = await fakeUpstream(roleThenSilence);
    const healthy = await fakeUpstream(answer('from b'));
    const router = routerFor([
      { name: 'a', port: silent.port, extra: '\n      first_token_timeout_ms: 300' },
      { name: 'b', port: healthy.port },
    ]);
    const { handedOn, onEvents } = collect();

    const result = await router.chat({ meta: RequestMetaSchema.parse({ complexity: 'low' }), messages, passThrough: { includeUsage: false, assemble: false, onEvents } });

    expect(result.target).toBe('b');
    expect(result.attempts[0]).toMatchObject({ target: 'a', errorClass: 'timeout', message: 'no first token within 300 ms' });
    expect(handedOn.every((piece) => piece.target === 'b')).toBe(true);
    expect(handedOn.map((piece) => piece.sse).join('').match(/"role":"assistant"/g)).toHaveLength(1);
  });

  it('a failure after bytes were handed on ends the call: no retry elsewhere', async () => {
    const cut = await fakeUpstream(cutAfterFirstToken);
    const healthy = await fakeUpstream(answer('from b'));
    const router = routerFor([
      { name: 'a', port: cut.port },
      { name: 'b', port: healthy.port },
    ]);
    const { handedOn, onEvents } = collect();

    const error = await router
      .chat({ meta: RequestMetaSchema.parse({ complexity: 'low' }), messages, passThrough: { includeUsage: false, assemble: false, onEvents } })
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );

    expect(error).toBeInstanceOf(RouterCallError);
    expect((error as RouterCallError).attempts.map((attempt) => attempt.target)).toEqual(['a']);
    expect(healthy.received).toHaveLength(0);
    expect(handedOn.map((piece) => piece.sse).join('')).toContain('The first half');
  });

  it('reads the upstream’s x-ratelimit headers on the pass-through path too: a target that says no requests are left is skipped until its reset', async () => {
    const limited: Behaviour = (res, body) => {
      res.setHeader('x-ratelimit-remaining-requests', '0');
      res.setHeader('x-ratelimit-reset-requests', '6m0s');
      answer('from a')(res, body);
    };
    const a = await fakeUpstream(limited);
    const b = await fakeUpstream(answer('from b'));
    const router = routerFor([
      { name: 'a', port: a.port },
      { name: 'b', port: b.port },
    ]);
    const call = () => router.chat({ meta: RequestMetaSchema.parse({}), messages, passThrough: { includeUsage: false, assemble: false, onEvents: collect().onEvents } });

    expect((await call()).target).toBe('a');
    expect((await call()).target).toBe('b');
    expect(a.received).toHaveLength(1);
  });
});
