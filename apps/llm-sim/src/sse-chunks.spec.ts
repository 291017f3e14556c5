import { completionObject, SSE_DONE, sseFrame, splitIntoPieces, streamChunks, usageFor } from './sse-chunks';
import { estimateTokens } from './token-estimate';

const identity = { id: 'chatcmpl-llmsim-1', created: 1_700_000_000, model: 'm' };

describe('SSE chunking', () => {
  it('splits into at most four pieces that join back to the text', () => {
    expect(splitIntoPieces('')).toEqual([]);
    expect(splitIntoPieces('abc')).toEqual(['a', 'b', 'c']);
    const text = 'The quick brown fox jumps over the lazy dog';
    const pieces = splitIntoPieces(text);
    expect(pieces).toHaveLength(4);
    expect(pieces.join('')).toBe(text);
  });

  it('emits role, content pieces, finish and an optional usage chunk', () => {
    const usage = usageFor(3, 4);
    const chunks = streamChunks(identity, '{"a":1,"b":2}', usage);
    expect(chunks[0]?.choices[0]).toEqual({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null });
    expect(chunks.slice(1, -2).map((c) => c.choices[0]?.delta.content).join('')).toBe('{"a":1,"b":2}');
    expect(chunks[chunks.length - 2]?.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(chunks[chunks.length - 1]).toEqual({ ...identity, object: 'chat.completion.chunk', choices: [], usage });
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === identity.id)).toBe(true);
    expect(streamChunks(identity, 'x', null).some((c) => 'usage' in c)).toBe(false);
  });

  it('frames SSE events and builds the non-streaming object', () => {
    expect(sseFrame({ a: 1 })).toBe('data: {"a":1}\n\n');
    expect(SSE_DONE).toBe('data: [DONE]\n\n');
    expect(completionObject(identity, 'hi', usageFor(1, 1))).toMatchObject({
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
  });

  it('estimates tokens as ceil(chars / 4)', () => {
    expect([0, 1, 4, 5].map(estimateTokens)).toEqual([0, 1, 1, 2]);
  });
});
