import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { Agent, EnvHttpProxyAgent, request as undiciRequest, type Dispatcher } from 'undici';
import type { TargetConfig } from '../config/router-config.schema';

/** What the openai SDK calls `fetch` with. */
type FetchInput = string | URL | Request;

/**
 * An egress proxy for calls leaving the network (cloud targets, see `connectionFor`), as the
 * usual HTTP_PROXY / HTTPS_PROXY / NO_PROXY variables name it. Calls are tunnelled with
 * CONNECT; hosts matching `noProxy` are reached directly.
 */
export interface UpstreamProxy {
  /** For http:// endpoints; https:// endpoints use it too when `httpsProxy` is unset. */
  httpProxy?: string;
  httpsProxy?: string;
  /** Comma-separated hosts, domains (`.example.com`), `host:port` or `*`. */
  noProxy?: string;
}

export interface UpstreamFetchOptions {
  proxy?: UpstreamProxy;
}

/**
 * How one target is reached. Local targets always directly, never through the egress proxy:
 * they are inside the network, and sensitive data, which only ever goes to local targets,
 * must not pass a proxy on its way out.
 */
export function connectionFor(target: Pick<TargetConfig, 'type'>, options: UpstreamFetchOptions): UpstreamFetchOptions {
  return target.type === 'local' ? {} : options;
}

/**
 * The fetch `init` of one call, plus a listener for the moment its connection is up (TCP, and
 * TLS or the proxy tunnel when there is one; at once on a pooled keep-alive socket). The SDK
 * hands `fetchOptions` through to `fetch` unchanged, so this reaches `send` per request.
 */
export interface UpstreamRequestInit extends RequestInit {
  onConnected?: () => void;
}

/** For the SDK's `fetchOptions` (which may not set what the SDK sets itself): tells `onConnected` when this request's connection is established. */
export function notifyWhenConnected(onConnected: () => void): Omit<UpstreamRequestInit, 'body' | 'headers' | 'method' | 'signal'> {
  return { onConnected };
}

export interface UpstreamFetch {
  /** For `new OpenAI({ fetch })`. */
  readonly fetch: (input: FetchInput, init?: RequestInit) => Promise<Response>;
  /** The keep-alive pool behind `fetch`, for calls made without the SDK (`upstreamRequest`). */
  readonly dispatcher: Dispatcher;
  /** Closes the connection pool once the calls in flight are done. */
  close(): Promise<void>;
}

/**
 * The openai SDK's `fetch`, on undici's `request()` with one keep-alive pool per target.
 *
 * Why not the global fetch: its WHATWG machinery (request cloning, web streams per chunk) cost
 * more CPU per call than the rest of the gateway together (docs/BENCHMARKS.md, gateway bench).
 * The SDK reads only `status`, `ok`, `url`, `headers`, `text()` / `json()` of a response, and
 * iterates `body` as an async iterable when it is one (as it does for node-fetch); undici's body
 * is a Node readable, so the stream's bytes reach the SDK's SSE parser without web streams.
 *
 * Timeouts are the router's (three stages, through `signal`) and the SDK's: undici's own
 * header and body timeouts are off so that no third clock stacks on them.
 */
export function createUpstreamFetch(options: UpstreamFetchOptions = {}): UpstreamFetch {
  const pool = connectionPool(options.proxy);
  return {
    fetch: (input, init) => send(pool, input, init),
    dispatcher: pool,
    close: () => pool.close(),
  };
}

/** One pool for local targets (direct) and one for the others (through the proxy, if any): for the probes. */
export function createUpstreamFetchByTarget(options: UpstreamFetchOptions): { fetchFor(target: Pick<TargetConfig, 'type'>): UpstreamFetch['fetch']; close(): Promise<void> } {
  const direct = createUpstreamFetch();
  const egress = options.proxy ? createUpstreamFetch(options) : direct;
  return {
    fetchFor: (target) => (connectionFor(target, options).proxy ? egress : direct).fetch,
    close: async () => {
      await Promise.all(egress === direct ? [direct.close()] : [direct.close(), egress.close()]);
    },
  };
}

function connectionPool(proxy: UpstreamProxy | undefined): Dispatcher {
  // undici's keep-alive default (4 s unless the server says otherwise) stays: it is below the
  // idle timeouts of common servers (uvicorn, Node: 5 s), so a pooled socket is never reused
  // just as the server closes it.
  const settings = { headersTimeout: 0, bodyTimeout: 0 };
  if (!proxy?.httpProxy && !proxy?.httpsProxy) return new Agent(settings);
  // Empty strings, not undefined: undici would otherwise read the proxy variables itself.
  return new EnvHttpProxyAgent({ ...settings, httpProxy: proxy.httpProxy ?? '', httpsProxy: proxy.httpsProxy ?? '', noProxy: proxy.noProxy ?? '' });
}

async function send(dispatcher: Dispatcher, input: FetchInput, init: UpstreamRequestInit = {}): Promise<Response> {
  if (typeof input !== 'string' && !(input instanceof URL)) throw new TypeError('upstream fetch: pass a URL, not a Request');
  const url = String(input);
  const reply = await upstreamRequest(dispatcher, url, {
    method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
    headers: headerRecord(init.headers),
    body: requestBody(init.body),
    signal: init.signal ?? undefined,
    onConnected: init.onConnected,
  });
  return new UpstreamResponse(url, reply) as unknown as Response;
}

export interface UpstreamRequest {
  method: Dispatcher.HttpMethod;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
  /** Told when the request is written to a connected socket (see `connectedInterceptor`). */
  onConnected?: () => void;
}

/** One request on `dispatcher` (a target's pool), ended by `signal` even while a proxy tunnel is being opened. */
export async function upstreamRequest(dispatcher: Dispatcher, url: string, request: UpstreamRequest): Promise<Dispatcher.ResponseData> {
  const { signal, onConnected } = request;
  signal?.throwIfAborted();
  const pending = undiciRequest(url, {
    dispatcher: onConnected === undefined ? dispatcher : dispatcher.compose(connectedInterceptor(onConnected)),
    method: request.method,
    headers: request.headers,
    body: request.body,
    ...(signal === undefined ? {} : { signal }),
  });
  return signal === undefined ? pending : untilAborted(pending, signal);
}

/**
 * undici ignores the signal while a proxy tunnel is being opened (a proxy that never answers
 * CONNECT holds the request for good), so the router's connect deadline would never end the
 * call: the signal settles it here. A reply that still comes afterwards is let go.
 */
function untilAborted(pending: Promise<Dispatcher.ResponseData>, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      reject(signal.reason);
      pending.then((late) => late.body.destroy(), () => undefined);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(
      (reply) => {
        signal.removeEventListener('abort', onAbort);
        resolve(reply);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * undici starts a request (`onRequestStart`) when it writes it to a connected socket: after the
 * TCP connect, the TLS handshake and any proxy tunnel, before the server has said anything.
 * `compose` wraps the shared pool for this one request; it opens no connections of its own.
 */
function connectedInterceptor(onConnected: () => void): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) => dispatch(options, new ConnectedHandler(handler, onConnected));
}

class ConnectedHandler implements Dispatcher.DispatchHandler {
  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly onConnected: () => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.onConnected();
    this.inner.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.inner.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void {
    this.inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.inner.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.inner.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.inner.onResponseError?.(controller, error);
  }
}

function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined) return out;
  const entries: Iterable<readonly (string | readonly string[] | undefined)[]> = headers instanceof Headers || Array.isArray(headers) ? headers : Object.entries(headers);
  for (const [name, value] of entries) {
    if (typeof name === 'string' && value !== undefined) out[name.toLowerCase()] = typeof value === 'string' ? value : value.join(', ');
  }
  return out;
}

function requestBody(body: RequestInit['body']): string | Uint8Array | undefined {
  if (body === null || body === undefined) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  throw new TypeError('upstream fetch: only string and byte bodies are sent (chat completions are JSON)');
}

/** The part of a fetch `Response` that the SDK reads; `body` is undici's Node readable. */
class UpstreamResponse {
  readonly status: number;
  readonly ok: boolean;
  readonly statusText = '';
  readonly headers: Headers;
  readonly body: Dispatcher.ResponseData['body'];

  constructor(
    readonly url: string,
    reply: Dispatcher.ResponseData,
  ) {
    this.status = reply.statusCode;
    this.ok = reply.statusCode >= 200 && reply.statusCode < 300;
    this.body = reply.body;
    this.headers = fetchHeaders(reply.headers);
  }

  text(): Promise<string> {
    return this.body.text();
  }

  json(): Promise<unknown> {
    return this.body.json();
  }
}

/** undici's header record as fetch `Headers` (what the SDK's errors carry). */
export function fetchHeaders(headers: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (Array.isArray(value)) for (const item of value) out.append(name, item);
    else if (value !== undefined) out.append(name, value);
  }
  return out;
}
