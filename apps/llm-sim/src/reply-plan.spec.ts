import { ChatCompletionRequestSchema } from './chat-request.schema';
import { cutAtStop, planReply } from './reply-plan';

const weatherTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
const body = (extra: Record<string, unknown>) => ChatCompletionRequestSchema.parse({ model: 'm', messages: [{ role: 'user', content: 'Weather in Oslo?' }], ...extra });

describe('planReply', () => {
  it('calls the offered tool, filling required string arguments from the user message', () => {
    expect(planReply(body({ tools: [weatherTool] }), 'text', 7)).toEqual({
      content: '',
      toolCalls: [{ id: 'call_llmsim_7', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Weather in Oslo?"}' } }],
      finishReason: 'tool_calls',
    });
  });

  it('answers in text once the last message is the tool result, or when tool_choice is none', () => {
    const withResult = ChatCompletionRequestSchema.parse({
      model: 'm',
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny, 21 C' },
      ],
    });
    expect(planReply(withResult, 'text', 1)).toEqual({ content: 'Using the tool result: sunny, 21 C', toolCalls: null, finishReason: 'stop' });
    expect(planReply(body({ tools: [weatherTool], tool_choice: 'none' }), 'text', 1).finishReason).toBe('stop');
  });

  it('cuts the text at the first stop sequence', () => {
    expect(planReply(body({ stop: ['END', 'x'] }), 'abc END def x', 1).content).toBe('abc ');
    expect(cutAtStop('abc', 'zz')).toBe('abc');
  });
});
