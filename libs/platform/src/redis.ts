import IORedis, { type Redis } from 'ioredis';

const reconnectBackoff = (times: number) => Math.min(100 * 2 ** times, 2_000);

/**
 * The process's one command connection (BullMQ duplicates it where it needs a blocking
 * one). `maxRetriesPerRequest: null` is what BullMQ requires; reconnects back off to 2 s.
 * Its commands wait for Redis however long it is away: fine for workers and sweeps, never
 * for a request someone is waiting on (see `connectRequestRedis`).
 */
export function connectRedis(url: string, name: string): Redis {
  return new IORedis(url, {
    connectionName: name,
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: reconnectBackoff,
  });
}

/**
 * A connection for request paths (enqueueing a submission, the gateway's idempotency records
 * and cache). While Redis is away a command fails at once instead of waiting in ioredis's
 * offline queue for the whole outage (and landing late, after the client gave up); a command
 * sent to a Redis that stopped answering fails after `commandTimeoutMs`.
 */
export function connectRequestRedis(url: string, name: string, commandTimeoutMs: number): Redis {
  return new IORedis(url, {
    connectionName: name,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutMs,
    enableReadyCheck: true,
    retryStrategy: reconnectBackoff,
  });
}

/** Thrown by `withDeadline` when the work did not finish in time. */
export class DeadlineExceededError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not finish within ${ms} ms`);
    this.name = 'DeadlineExceededError';
  }
}

/**
 * `work`, or a `DeadlineExceededError` after `ms`: the caller stops waiting (the work itself
 * may still finish later; request-path connections make sure it does not linger).
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceededError(what, ms)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Deletes every key under a BullMQ prefix (a test's, a demo's or a bench's own), in pages. */
export async function deleteKeysWithPrefix(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length) deleted += await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
  return deleted;
}
