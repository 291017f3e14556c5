import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { APIError } from 'openai';
import type { Dispatcher } from 'undici';
import { ChoiceAssembler, type CompletionChunk } from './choice-assembler';
import type { PassThrough, ProviderCall, ProviderResult } from './chat-provider';
import { MalformedCompletionError } from './malformed-completion.error';
import { SseEventReader } from './sse-event-reader';
import { fetchHeaders, upstreamRequest } from './upstream-fetch';
import { readUpstreamQuota } from '../quota/upstream-quota';

/** Where a pass-through call goes: one target's pool, URL and the headers every call carries. */
export interface PassThroughTarget {
  dispatcher: Dispatcher;
  /** `<endpoint>/chat/completions`. */
  url: string;
  /** Content type, accept and authorization; the call's own headers (traceparent, …) are added. */
  headers: Readonly<Record<string, string>>;
  /** The model named when the stream names none. */
  model: string;
}

/**
 * One streamed chat completion without the SDK: the body as the router built it, straight onto
 * the target's keep-alive pool, the SSE stream read by `PassThroughStream`. Errors are the SDK's
 * own (`APIError` with status and headers), so they are classified as on the SDK path.
 */
export async function passThroughCall(target: PassThroughTarget, body: string, call: ProviderCall, passThrough: PassThrough): Promise<ProviderResult> {
  const started = performance.now();
  const reply = await upstreamRequest(target.dispatcher, target.url, {
    method: 'POST',
    headers: call.headers === undefined ? { ...target.headers } : { ...target.headers, ...call.headers },
    body,
    signal: call.signal,
    ...(call.onConnected === undefined ? {} : { onConnected: call.onConnected }),
  });
  if (reply.statusCode < 200 || reply.statusCode >= 300) throw await statusError(reply);
  const stream = new PassThroughStream(passThrough, started, call.onFirstToken, reply.headers);
  // A character split across two reads is decoded once both are in.
  const decoder = new StringDecoder('utf8');
  await eachChunk(reply.body, (bytes) => stream.push(decoder.write(bytes)));
  stream.push(decoder.end());
  // An aborted body can end quietly: what arrived before a deadline is not an answer.
  call.signal.throwIfAborted();
  const result = stream.finish(target.model);
  const quota = readUpstreamQuota((name) => firstHeader(reply.headers[name]));
  return quota === undefined ? result : { ...result, quota };
}

/**
 * Every chunk of `body` to `onChunk`, in flowing mode (cheaper per chunk than its async
 * iterator: no promise per read). Settles when the body ended; rejects on its error, on a
 * close before the end, or when `onChunk` throws (the body is destroyed then).
 */
export function eachChunk(body: Readable, onChunk: (bytes: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let ended = false;
    const fail = (error: unknown) => {
      ended = true;
      reject(error instanceof Error ? error : new Error(String(error)));
    };
    body.on('data', (bytes: Buffer) => {
      if (ended) return;
      try {
        onChunk(bytes);
      } catch (error) {
        fail(error);
        body.destroy();
      }
    });
    body.once('end', () => {
      if (ended) return;
      ended = true;
      resolve();
    });
    body.once('error', (error) => {
      if (!ended) fail(error);
    });
    body.once('close', () => {
      if (!ended) fail(new Error('the upstream closed the stream before its end'));
    });
  });
}

function firstHeader(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

async function statusError(reply: Dispatcher.ResponseData): Promise<APIError> {
  const text = await reply.body.text().catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
  const json = parseJson(text);
  return APIError.generate(reply.statusCode, json, json === undefined ? text : undefined, fetchHeaders(reply.headers));
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Matches an event that carries a usage object (not OpenAI's `"usage":null` on every chunk). */
const USAGE_OBJECT = /"usage"\s*:\s*\{/;

/**
 * The upstream's SSE stream, read once as it arrives, for a pass-through call.
 *
 * Events before the first token (the role chunk) are held; the first token hands them on
 * together with it, so until then nothing has reached the client and the router may still fail
 * over. After it, an event is parsed only when it may carry usage or is not a chunk at all (an
 * error): a key followed by `":` cannot occur inside a JSON string, so these substring checks do
 * not misfire on content. Everything is parsed when the answer must be assembled.
 */
export class PassThroughStream {
  private readonly reader = new SseEventReader();
  private readonly assembler = new ChoiceAssembler();
  private held: string[] = [];
  /** Events kept to count the answer from when the upstream never reports usage. */
  private readonly unassembled: string[] = [];
  private model = '';
  private sawChoice = false;
  private firstTokenMs: number | undefined;
  private done = false;

  constructor(
    private readonly options: PassThrough,
    private readonly started: number,
    private readonly onFirstToken: (() => void) | undefined,
    private readonly headers: Record<string, string | string[] | undefined>,
  ) {}

  /** One piece of the body's text; hands on what became ready in one write. */
  push(text: string): void {
    let ready = '';
    for (const event of this.reader.push(text)) {
      if (this.done) break;
      if (event.data === '[DONE]') {
        this.done = true;
        break;
      }
      if (event.event === 'error') throw new APIError(undefined, parseJson(event.data), event.data, fetchHeaders(this.headers));
      ready += this.take(event.data);
    }
    if (ready !== '') this.options.onEvents?.(ready);
  }

  /** The result once the stream ended; held events (an answer without any token) are handed on now. */
  finish(fallbackModel: string): ProviderResult {
    if (this.held.length > 0) {
      this.options.onEvents?.(this.held.join(''));
      this.held = [];
    }
    if (!this.sawChoice) throw new MalformedCompletionError('the stream carried no choices');
    if (!this.options.assemble && this.assembler.usage === undefined) {
      // Without usage the tokens are counted from the text, so the answer is needed after all.
      for (const data of this.unassembled) this.assembler.add(JSON.parse(data) as CompletionChunk);
    }
    const usage = this.assembler.usage;
    const model = this.model || fallbackModel;
    const timing = this.firstTokenMs === undefined ? {} : { firstTokenMs: this.firstTokenMs };
    if (!this.options.assemble && usage !== undefined) return { content: '', model, usage, ...timing };
    const choices = this.assembler.finished();
    const first = choices[0]!;
    return {
      content: first.content,
      model,
      finishReason: first.finishReason,
      ...(first.toolCalls ? { toolCalls: first.toolCalls } : {}),
      choices,
      ...(usage ? { usage } : {}),
      ...timing,
    };
  }

  /** The SSE text to hand on for one event's data ('' for none), noting tokens, model and usage. */
  private take(data: string): string {
    const beforeFirstToken = this.firstTokenMs === undefined;
    const parse = this.options.assemble || beforeFirstToken || !data.includes('"choices"') || USAGE_OBJECT.test(data);
    let usageOnly = false;
    if (parse) {
      const chunk = parseChunk(data, this.headers);
      if (this.model === '' && typeof chunk.model === 'string') this.model = chunk.model;
      const choices = chunk.choices ?? [];
      if (choices.length > 0) this.sawChoice = true;
      usageOnly = choices.length === 0 && chunk.usage != null;
      const token = this.options.assemble ? this.assembler.add(chunk) : this.notAssembled(chunk, data);
      if (token && beforeFirstToken) {
        this.firstTokenMs = Math.round(performance.now() - this.started);
        this.onFirstToken?.();
      }
    } else if (this.assembler.usage === undefined) {
      this.unassembled.push(data);
    }
    if (usageOnly && !this.options.includeUsage) return '';
    const sse = `data: ${data}\n\n`;
    if (this.firstTokenMs === undefined) {
      this.held.push(sse);
      return '';
    }
    if (this.held.length === 0) return sse;
    const flushed = this.held.join('') + sse;
    this.held = [];
    return flushed;
  }

  /** Reads usage off a parsed chunk without assembling; true when it carried a token. */
  private notAssembled(chunk: CompletionChunk, data: string): boolean {
    if (chunk.usage) this.assembler.usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
    else this.unassembled.push(data);
    return (chunk.choices ?? []).some((choice) => {
      const delta = choice.delta;
      return (typeof delta?.content === 'string' && delta.content !== '') || (Array.isArray(delta?.tool_calls) && delta.tool_calls.length > 0);
    });
  }
}

function parseChunk(data: string, headers: Record<string, string | string[] | undefined>): CompletionChunk {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new MalformedCompletionError(`a stream event is not JSON: ${data.slice(0, 200)}`);
  }
  if (typeof value !== 'object' || value === null) throw new MalformedCompletionError(`a stream event is not a JSON object: ${data.slice(0, 200)}`);
  const error = (value as { error?: unknown }).error;
  if (error) throw new APIError(undefined, error as Record<string, unknown>, undefined, fetchHeaders(headers));
  return value as CompletionChunk;
}
