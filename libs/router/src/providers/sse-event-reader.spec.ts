import { SseEventReader } from './sse-event-reader';

describe('SseEventReader', () => {
  it('splits events at blank lines and keeps an unfinished one for the next piece', () => {
    const reader = new SseEventReader();
    expect(reader.push('data: {"a":1}\n\ndata: {"b"')).toEqual([{ event: null, data: '{"a":1}' }]);
    expect(reader.push(':2}\n')).toEqual([]);
    expect(reader.push('\ndata: [DONE]\n\n')).toEqual([
      { event: null, data: '{"b":2}' },
      { event: null, data: '[DONE]' },
    ]);
  });

  it('reads every piece boundary the same: byte by byte equals all at once', () => {
    const stream = 'data: one\r\n\r\n: a comment\n\nevent: error\ndata: {"x":\ndata: 1}\r\rdata:no-space\n\n';
    const whole = new SseEventReader().push(stream);
    const reader = new SseEventReader();
    const pieces = [...stream].flatMap((char) => reader.push(char));
    expect(pieces).toEqual(whole);
    expect(whole).toEqual([
      { event: null, data: 'one' },
      { event: 'error', data: '{"x":\n1}' },
      { event: null, data: 'no-space' },
    ]);
  });

  it('ignores other fields and blank lines between events', () => {
    expect(new SseEventReader().push('id: 7\nretry: 100\n\n\n\ndata: x\n\n')).toEqual([{ event: null, data: 'x' }]);
  });
});
