import { createHash } from 'node:crypto';
import type { ChatCallRequest } from './chat-call';

interface Shared<T> {
  promise: Promise<T>;
  controller: AbortController;
  /** Callers still waiting for it; the shared work is aborted only when every one of them has gone. */
  waiting: number;
}

/**
 * Identical concurrent work done once (seed 003 §6.2): while one run of a key is in flight,
 * later callers with the same key wait for its result instead of starting their own. A failure
 * reaches every caller, who each go on from there. This process only: other processes run their own.
 */
export class Coalescer<T> {
  private readonly inFlight = new Map<string, Shared<T>>();
  /** Runs started (one upstream call each). */
  leaders = 0;
  /** Callers that shared a run already in flight. */
  followers = 0;

  /**
   * `start` runs once per key at a time, with a signal that aborts only when every waiting
   * caller's own `signal` has. A caller whose signal aborts stops waiting with its reason.
   */
  async run(key: string, signal: AbortSignal | undefined, start: (signal: AbortSignal) => Promise<T>): Promise<{ value: T; shared: boolean }> {
    signal?.throwIfAborted();
    let entry = this.inFlight.get(key);
    const shared = entry !== undefined;
    if (entry === undefined) {
      const controller = new AbortController();
      const promise: Promise<T> = start(controller.signal).finally(() => {
        if (this.inFlight.get(key)?.promise === promise) this.inFlight.delete(key);
      });
      entry = { controller, waiting: 0, promise };
      this.inFlight.set(key, entry);
      this.leaders += 1;
    } else {
      this.followers += 1;
    }
    const joined = entry;
    joined.waiting += 1;
    if (signal === undefined) return { value: await joined.promise, shared };
    return await new Promise<{ value: T; shared: boolean }>((resolve, reject) => {
      const leave = () => {
        joined.waiting -= 1;
        if (joined.waiting === 0) joined.controller.abort(signal.reason);
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted by the caller', { cause: signal.reason }));
      };
      signal.addEventListener('abort', leave, { once: true });
      joined.promise.then(
        (value) => {
          signal.removeEventListener('abort', leave);
          resolve({ value, shared });
        },
        (error: unknown) => {
          signal.removeEventListener('abort', leave);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  /** Calls in flight now, by key (for tests and the admin view). */
  get size(): number {
    return this.inFlight.size;
  }
}

/**
 * The key two calls share an upstream attempt by, or undefined when the call may not be
 * shared: only deterministic settings (temperature 0, or a fixed `seed`), never a streaming
 * caller (its pieces are its own, as they arrive). The key is the gateway cache key's fields
 * (messages, temperature, max_tokens, business_type, format, passed-through parameters) plus
 * the tenant: calls of different tenants never share.
 */
export function coalescingKey(request: ChatCallRequest): string | undefined {
  if (request.onDelta !== undefined || request.passThrough?.onEvents !== undefined) return undefined;
  const seeded = request.upstreamParams?.seed !== undefined && request.upstreamParams.seed !== null;
  if (request.temperature !== 0 && !seeded) return undefined;
  return createHash('sha256')
    .update(
      JSON.stringify([
        request.context?.tenantId ?? null,
        request.messages,
        request.temperature ?? null,
        request.maxTokens ?? request.meta.max_output_tokens ?? null,
        request.meta.business_type ?? null,
        request.jsonMode ?? false,
        request.responseFormat ?? null,
        request.upstreamParams ?? null,
      ]),
    )
    .digest('base64url');
}
