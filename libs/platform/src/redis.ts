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
