import type { Redis } from 'ioredis';
import { loadConfig } from '@switchyard/config';
import { sleep, waitFor } from '@switchyard/devkit';
import { connectRedis, duplicateConnection } from './redis';

const settings = loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' });

const ready = (redis: Redis) => waitFor('the connection to be ready again', () => Promise.resolve(redis.status === 'ready' || undefined), 10_000, 20);

/**
 * What Sentinel's failover detector does when `+switch-master` arrives while the connection is
 * reconnecting: a disconnect (with reconnect) between "connecting" and the connector's answer.
 * ioredis then ends the connection for good.
 */
async function endMidReconnect(redis: Redis): Promise<void> {
  const ended = new Promise<void>((resolve) => redis.once('end', () => resolve()));
  redis.once('connecting', () => redis.disconnect(true));
  redis.disconnect(true);
  await ended;
}

describe('Redis connections that ioredis ends mid-reconnect (real Redis)', () => {
  const opened: Redis[] = [];
  const open = (redis: Redis): Redis => {
    redis.on('error', () => undefined);
    opened.push(redis);
    return redis;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((redis) => redis.quit().catch(() => undefined)));
  });

  it('connect again and answer, where a plain ioredis connection stays closed', async () => {
    const redis = open(connectRedis(settings, 'switchyard-test-reconnect') as Redis);
    expect(await redis.ping()).toBe('PONG');
    await endMidReconnect(redis);
    await ready(redis);
    expect(await redis.ping()).toBe('PONG');
  });

  it('so do their duplicates (a subscriber, BullMQ’s blocking connections)', async () => {
    const redis = open(connectRedis(settings, 'switchyard-test-reconnect') as Redis);
    const copy = open(duplicateConnection(redis, 'switchyard-test-copy') as Redis);
    expect(await copy.ping()).toBe('PONG');
    await endMidReconnect(copy);
    await ready(copy);
    expect(await copy.client('GETNAME')).toBe('switchyard-test-copy');
  });

  it('stay closed once closed on purpose (quit, disconnect)', async () => {
    const quitted = open(connectRedis(settings, 'switchyard-test-quit') as Redis);
    const disconnected = open(connectRedis(settings, 'switchyard-test-disconnect') as Redis);
    await Promise.all([quitted.ping(), disconnected.ping()]);
    await quitted.quit();
    const ended = new Promise((resolve) => disconnected.once('end', resolve));
    disconnected.disconnect();
    await ended;
    // Longer than the first reconnect backoff (200 ms).
    await sleep(600);
    expect([quitted.status, disconnected.status]).toEqual(['end', 'end']);
  });
});
