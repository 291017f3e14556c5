import type { PipelineSettings } from './settings';

/** Runs warm-up batches until `warmupSeconds` have passed (at least one batch). */
export async function warmUp(settings: PipelineSettings, batch: (index: number) => Promise<unknown>): Promise<void> {
  const start = process.hrtime.bigint();
  let index = 1;
  do {
    await batch(index);
    index += 1;
  } while (secondsSince(start) < settings.warmupSeconds);
}

/** Resolves when `expected` hits have arrived; rejects on the first failure or at the deadline. */
export function countdown(expected: number, timeoutMs: number, what: string) {
  let count = 0;
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms with ${count}/${expected} ${what} done`)), timeoutMs);
  const settled = promise.finally(() => clearTimeout(timer));
  // A failure can land before anyone awaits (during submission): it is awaited later, not unhandled.
  settled.catch(() => undefined);
  return {
    promise: settled,
    get count() {
      return count;
    },
    hit() {
      count += 1;
      if (count === expected) resolve();
    },
    fail(error: Error) {
      reject(error);
    },
  };
}

/** Runs `fn(0..count-1)` with at most `limit` calls in flight. */
export async function forEachLimit(count: number, limit: number, fn: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, count) }, async () => {
    while (next < count) {
      const index = next;
      next += 1;
      await fn(index);
    }
  });
  await Promise.all(lanes);
}

export const secondsSince = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e9;
