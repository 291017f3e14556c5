import { APIError } from 'openai';
import { classifyUpstreamError } from '../calls/upstream-error';
import type { PassThrough } from './chat-provider';
import { MalformedCompletionError } from './malformed-completion.error';
import { Readable } from 'node:stream';
import { PassThroughStream, eachChunk } from './pass-through-call';

const chunk = (delta: Record<string, unknown>, finish: string | null = null, index = 0) =>
  JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'up-model', choices: [{ index, delta, finish_reason: finish }] });
const usageChunk = JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'up-model', choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } });
const sse = (...datas: string[]) => datas.map((data) => `data: ${data}\n\n`).join('');

const role = chunk({ role: 'assistant', content: '' });
const hello = chunk({ content: 'Hello' });
const world = chunk({ content: ', world' });
const stop = chunk({}, 'stop');

function streamOf(options: Partial<PassThrough> = {}) {
  const handedOn: string[] = [];
  let firstTokens = 0;
  const stream = new PassThroughStream(
    { includeUsage: false, assemble: false, onEvents: (text) => handedOn.push(text), ...options },
    performance.now(),
    () => (firstTokens += 1),
    {},
  );
  return { stream, handedOn, firstTokens: () => firstTokens };
}

describe('PassThroughStream', () => {
  it('holds the role chunk until the first token, then hands both on in one write; afterwards events go on as they came', () => {
    const { stream, handedOn, firstTokens } = streamOf();
    stream.push(sse(role));
    expect(handedOn).toEqual([]);
    expect(firstTokens()).toBe(0);
    stream.push(sse(hello));
    expect(handedOn).toEqual([sse(role, hello)]);
    expect(firstTokens()).toBe(1);
    stream.push(sse(world, stop));
    expect(handedOn).toEqual([sse(role, hello), sse(world, stop)]);
    expect(firstTokens()).toBe(1);
  });

  it('reads usage from the final chunk without assembling the answer, and drops that chunk unless the client asked for it', () => {
    const { stream, handedOn } = streamOf();
    stream.push(sse(role, hello, world, stop, usageChunk, '[DONE]'));
    const result = stream.finish('fallback-model');
    expect(result).toEqual({ content: '', model: 'up-model', usage: { inputTokens: 11, outputTokens: 7 }, firstTokenMs: expect.any(Number) as number });
    expect(handedOn.join('')).toBe(sse(role, hello, world, stop));

    const asked = streamOf({ includeUsage: true });
    asked.stream.push(sse(role, hello, stop, usageChunk));
    asked.stream.finish('fallback-model');
    expect(asked.handedOn.join('')).toBe(sse(role, hello, stop, usageChunk));
  });

  it('assembles content, tool calls, every choice and its finish reason when asked to', () => {
    const { stream } = streamOf({ assemble: true });
    const toolStart = chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"ci' } }] }, null, 1);
    const toolMore = chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Oslo"}' } }] }, null, 1);
    stream.push(sse(role, hello, toolStart, world, toolMore, stop, chunk({}, 'tool_calls', 1), usageChunk));
    const result = stream.finish('fallback-model');
    expect(result).toMatchObject({
      content: 'Hello, world',
      model: 'up-model',
      finishReason: 'stop',
      usage: { inputTokens: 11, outputTokens: 7 },
      choices: [
        { index: 0, content: 'Hello, world', finishReason: 'stop' },
        { index: 1, content: '', finishReason: 'tool_calls', toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      ],
    });
  });

  it('assembles after all when the upstream reported no usage, so the tokens can be counted from the text', () => {
    const { stream, handedOn } = streamOf();
    stream.push(sse(role, hello, world, stop, '[DONE]'));
    expect(stream.finish('fallback-model')).toMatchObject({ content: 'Hello, world', finishReason: 'stop', model: 'up-model' });
    expect(handedOn.join('')).toBe(sse(role, hello, world, stop));
  });

  it('hands held events on at the end when the answer had no token at all', () => {
    const { stream, handedOn, firstTokens } = streamOf();
    stream.push(sse(role, chunk({}, 'length'), usageChunk));
    expect(handedOn).toEqual([]);
    expect(stream.finish('fallback-model')).toMatchObject({ content: '', usage: { outputTokens: 7 } });
    expect(handedOn).toEqual([sse(role, chunk({}, 'length'))]);
    expect(firstTokens()).toBe(0);
  });

  it('ignores anything after [DONE]', () => {
    const { stream, handedOn } = streamOf();
    stream.push(sse(role, hello, '[DONE]', world));
    stream.finish('fallback-model');
    expect(handedOn.join('')).toBe(sse(role, hello));
  });

  it('an error event mid-stream fails the call as the SDK would (an APIError without status: unknown)', () => {
    const { stream } = streamOf();
    stream.push(sse(role, hello));
    const thrown = catchError(() => stream.push(sse(JSON.stringify({ error: { message: 'engine died', type: 'server_error' } }))));
    expect(thrown).toBeInstanceOf(APIError);
    expect((thrown as APIError).message).toContain('engine died');
    expect(classifyUpstreamError(thrown, { timedOut: false })).toEqual({ errorClass: 'unknown' });
    expect(catchError(() => streamOf().stream.push('event: error\ndata: {"message":"overloaded"}\n\n'))).toBeInstanceOf(APIError);
  });

  it('a stream without choices, or with an event that is not JSON, is a malformed completion', () => {
    const empty = streamOf().stream;
    empty.push(sse(usageChunk));
    expect(catchError(() => empty.finish('m'))).toBeInstanceOf(MalformedCompletionError);
    expect(catchError(() => streamOf().stream.push(sse('not json')))).toBeInstanceOf(MalformedCompletionError);
  });

  it('names the fallback model when the stream names none', () => {
    const { stream } = streamOf({ assemble: true });
    stream.push(sse(JSON.stringify({ choices: [{ index: 0, delta: { content: 'x' }, finish_reason: 'stop' }] })));
    expect(stream.finish('fallback-model').model).toBe('fallback-model');
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('eachChunk (reading the upstream body)', () => {
  it('hands on every chunk in order and settles at the end', async () => {
    const seen: string[] = [];
    await eachChunk(Readable.from([Buffer.from('a'), Buffer.from('b'), Buffer.from('c')]), (bytes) => seen.push(bytes.toString()));
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  it('fails when the body closes before its end, or with the body\'s own error', async () => {
    const cut = new Readable({ read() {} });
    cut.push('part');
    const closed = eachChunk(cut, () => undefined);
    setImmediate(() => cut.destroy());
    await expect(closed).rejects.toThrow('closed the stream before its end');

    const broken = new Readable({ read() {} });
    const failed = eachChunk(broken, () => undefined);
    broken.destroy(new Error('socket hang up'));
    await expect(failed).rejects.toThrow('socket hang up');
  });

  it('fails with what the reader threw and destroys the body', async () => {
    const body = new Readable({ read() {} });
    const reading = eachChunk(body, () => {
      throw new Error('bad event');
    });
    body.push('x');
    await expect(reading).rejects.toThrow('bad event');
    expect(body.destroyed).toBe(true);
  });
});
