import IORedis, { type Redis } from 'ioredis';

/**
 * The process's one command connection (BullMQ duplicates it where it needs a blocking
 * one). `maxRetriesPerRequest: null` is what BullMQ requires; reconnects back off to 2 s.
 */
export function connectRedis(url: string, name: string): Redis {
  return new IORedis(url, {
    connectionName: name,
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(100 * 2 ** times, 2_000),
  });
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
