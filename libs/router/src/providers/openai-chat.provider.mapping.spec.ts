import { toUpstreamMessage } from './openai-chat.provider';

describe('toUpstreamMessage', () => {
  it('sends a tool-only assistant turn with content null and its tool calls, and a tool message with its call id', () => {
    const call = { id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{}' } };
    expect(toUpstreamMessage({ role: 'assistant', content: '', tool_calls: [call] })).toEqual({ role: 'assistant', content: null, tool_calls: [call] });
    expect(toUpstreamMessage({ role: 'tool', content: 'r', tool_call_id: 'c1' })).toEqual({ role: 'tool', content: 'r', tool_call_id: 'c1' });
    expect(toUpstreamMessage({ role: 'user', content: 'hi', name: 'ann' })).toEqual({ role: 'user', content: 'hi', name: 'ann' });
    expect(toUpstreamMessage({ role: 'assistant', content: 'plain' })).toEqual({ role: 'assistant', content: 'plain' });
  });
});
