/** One server-sent event: its `event:` name (null when it has none) and its `data:` lines joined. */
export interface SseEvent {
  event: string | null;
  data: string;
}

/**
 * Splits a `text/event-stream` body into events as its text arrives in arbitrary pieces
 * (the WHATWG rules an OpenAI-compatible stream needs: `\n`, `\r\n` or `\r` line ends, `data:`
 * lines joined with `\n`, `:` comments and other fields ignored, an event ends at a blank line).
 */
export class SseEventReader {
  private pending = '';
  private data: string[] = [];
  private event: string | null = null;
  /** A `\r` ended the last piece: a `\n` opening the next one belongs to that line end. */
  private afterCarriageReturn = false;

  /** The events completed by `text`; an unfinished one waits for the next piece. */
  push(text: string): SseEvent[] {
    if (this.afterCarriageReturn && text.startsWith('\n')) text = text.slice(1);
    this.afterCarriageReturn = text.endsWith('\r');
    const events: SseEvent[] = [];
    const buffer = this.pending === '' ? text : this.pending + text;
    let start = 0;
    for (;;) {
      const end = lineEnd(buffer, start);
      if (end === -1) break;
      this.line(buffer.slice(start, end), events);
      start = end + (buffer.charCodeAt(end) === CR && buffer.charCodeAt(end + 1) === LF ? 2 : 1);
    }
    this.pending = start === 0 ? buffer : buffer.slice(start);
    return events;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) events.push({ event: this.event, data: this.data.length === 1 ? this.data[0]! : this.data.join('\n') });
      this.data = [];
      this.event = null;
      return;
    }
    if (line.charCodeAt(0) === COLON) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === SPACE) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}

const CR = 13;
const LF = 10;
const COLON = 58;
const SPACE = 32;

function lineEnd(text: string, from: number): number {
  const lf = text.indexOf('\n', from);
  const cr = text.indexOf('\r', from);
  if (cr === -1) return lf;
  if (lf === -1) return cr;
  return Math.min(lf, cr);
}
