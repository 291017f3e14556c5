import { ValidationError } from '@switchyard/contracts';
import { parseChatCompletionRequest, UnknownModelError } from './chat-completion.schema';

describe('parseChatCompletionRequest', () => {
  it('reads request meta from metadata, with the string values the openai SDK sends', () => {
    const parsed = parseChatCompletionRequest({
      model: 'auto',
      messages: [
        { role: 'developer', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'hello ' }, { type: 'text', text: 'there' }] },
      ],
      max_completion_tokens: 64,
      metadata: { task_type: 'extract', sensitivity: 'sensitive', tags: 'a, b', timeout_ms: '5000' },
      top_p: 0.9,
    });
    expect(parsed.meta).toMatchObject({ task_type: 'extract', sensitivity: 'sensitive', tags: ['a', 'b'], timeout_ms: 5000, complexity: 'medium' });
    expect(parsed.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello there' },
    ]);
    expect(parsed.maxTokens).toBe(64);
    expect(parsed.upstreamParams).toEqual({ top_p: 0.9 });
  });

  it('defaults the meta when metadata is absent', () => {
    expect(parseChatCompletionRequest({ messages: [{ role: 'user', content: 'x' }] }).meta).toMatchObject({ task_type: 'chat', sensitivity: 'internal' });
  });

  it.each([
    [{ messages: [] }, 'messages'],
    [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages.0.tool_call_id'],
    [{ messages: [{ role: 'function', content: 'x' }] }, 'messages.0.role'],
    [{ messages: [{ role: 'user', content: 'x' }], metadata: { priority: 'urgent' } }, 'metadata.priority'],
    [{ messages: [{ role: 'user', content: 'x' }], n: 2 }, 'n'],
    [[], '(body)'],
  ])('rejects %j at %s', (body, path) => {
    try {
      parseChatCompletionRequest(body);
      throw new Error('expected a ValidationError');
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues[0]!.path).toBe(path);
    }
  });

  it.each([
    [{ messages: [{ role: 'user', content: 'x' }], metadata: { business_type: 'x\u0000y' } }, 'metadata.business_type'],
    [{ messages: [{ role: 'user', content: 'x' }], metadata: { tags: 'a,b\udc00' } }, 'metadata.tags.1'],
    [{ messages: [{ role: 'user', content: 'hi\ud800' }] }, 'messages.0.content'],
    [{ messages: [{ role: 'user', content: [{ type: 'text', text: '\u0000' }] }] }, 'messages.0.content'],
    [{ model: 'm\u0000', messages: [{ role: 'user', content: 'x' }] }, 'model'],
  ])('refuses NUL and lone surrogates in the strings it reads (%#)', (body, path) => {
    try {
      parseChatCompletionRequest(body);
      throw new Error('expected a ValidationError');
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues.map((issue) => issue.path)).toContain(path);
    }
  });
});


const weather = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
const limits = { aliases: { fast: { task_type: 'classify' as const, complexity: 'low' as const }, private: { sensitivity: 'sensitive' as const } }, maxN: 2 };

function issuePaths(body: unknown): string[] {
  try {
    parseChatCompletionRequest(body, limits);
  } catch (error) {
    if (error instanceof ValidationError) return error.issues.map((issue) => issue.path);
    throw error;
  }
  throw new Error('expected a ValidationError');
}

describe('parseChatCompletionRequest: the whole chat surface', () => {
  it('passes tools, tool_choice, stop, seed, penalties, logit_bias, n, user and unknown fields upstream as they came; metadata never', () => {
    const parsed = parseChatCompletionRequest(
      {
        model: 'auto',
        messages: [{ role: 'user', content: 'weather?' }],
        tools: [weather],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        parallel_tool_calls: false,
        stop: ['END'],
        seed: 7,
        top_p: 0.5,
        presence_penalty: 0.1,
        frequency_penalty: -0.1,
        logit_bias: { '50256': -100 },
        n: 2,
        user: 'u-1',
        service_tier: 'flex',
        metadata: { task_type: 'chat' },
      },
      limits,
    );
    expect(parsed.upstreamParams).toEqual({
      tools: [weather],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      stop: ['END'],
      seed: 7,
      top_p: 0.5,
      presence_penalty: 0.1,
      frequency_penalty: -0.1,
      logit_bias: { '50256': -100 },
      n: 2,
      user: 'u-1',
      service_tier: 'flex',
    });
    expect(parsed.n).toBe(2);
  });

  it('maps a tool round trip to router messages', () => {
    const parsed = parseChatCompletionRequest({
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      ],
    });
    expect(parsed.messages).toEqual([
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', content: 'sunny', tool_call_id: 'c1' },
    ]);
  });

  it.each([
    [{ messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'bad name!' } }] }, 'tools.0.function.name'],
    [{ messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'f', parameters: { type: 42 } } }] }, 'tools.0.function.parameters'],
    [{ messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'nope', content: 'r' }] }, 'messages.1.tool_call_id'],
    [{ messages: [{ role: 'user', content: 'x' }], n: 3 }, 'n'],
    [{ messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'nonsense' } } } }, 'response_format.json_schema.schema'],
    [{ messages: [{ role: 'user', content: 'x' }], tools: [weather], tool_choice: { type: 'function', function: { name: 'other' } } }, 'tool_choice.function.name'],
  ])('refuses bad input %# naming %s', (body, path) => {
    expect(issuePaths(body)).toContain(path);
  });

  it('routes by an alias named in model; metadata wins field by field; an unknown model is refused', () => {
    expect(parseChatCompletionRequest({ model: 'fast', messages: [{ role: 'user', content: 'x' }] }, limits).meta).toMatchObject({ task_type: 'classify', complexity: 'low' });
    expect(parseChatCompletionRequest({ model: 'fast', messages: [{ role: 'user', content: 'x' }], metadata: { complexity: 'high' } }, limits).meta).toMatchObject({
      task_type: 'classify',
      complexity: 'high',
    });
    expect(() => parseChatCompletionRequest({ model: 'gpt-5', messages: [{ role: 'user', content: 'x' }] }, limits)).toThrow(UnknownModelError);
  });

  it('an alias cannot relax sensitivity, nor metadata an alias that makes it sensitive', () => {
    expect(parseChatCompletionRequest({ model: 'private', messages: [{ role: 'user', content: 'x' }], metadata: { sensitivity: 'public' } }, limits).meta.sensitivity).toBe('sensitive');
    expect(parseChatCompletionRequest({ model: 'fast', messages: [{ role: 'user', content: 'x' }], metadata: { sensitivity: 'sensitive' } }, limits).meta.sensitivity).toBe('sensitive');
  });
});
