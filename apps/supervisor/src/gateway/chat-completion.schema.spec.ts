import { ValidationError } from '@switchyard/contracts';
import { parseChatCompletionRequest } from './chat-completion.schema';

describe('parseChatCompletionRequest', () => {
  it('reads request meta from metadata, with the string values the openai SDK sends', () => {
    const parsed = parseChatCompletionRequest({
      model: 'anything',
      messages: [
        { role: 'developer', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'hello ' }, { type: 'text', text: 'there' }] },
      ],
      max_completion_tokens: 64,
      metadata: { task_type: 'extract', sensitivity: 'sensitive', tags: 'a, b', timeout_ms: '5000' },
      top_p: 0.9,
    });
    expect(parsed.meta).toMatchObject({ task_type: 'extract', sensitivity: 'sensitive', tags: ['a', 'b'], timeout_ms: 5000, complexity: 'medium' });
    expect(parsed.body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello there' },
    ]);
    expect(parsed.maxTokens).toBe(64);
  });

  it('defaults the meta when metadata is absent', () => {
    expect(parseChatCompletionRequest({ messages: [{ role: 'user', content: 'x' }] }).meta).toMatchObject({ task_type: 'chat', sensitivity: 'internal' });
  });

  it.each([
    [{ messages: [] }, 'messages'],
    [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages.0.role'],
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

