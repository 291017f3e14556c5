import IORedis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { CallRetryBudget, RedisRetryBudgetStore } from './retry-budget';

describe('RedisRetryBudgetStore (real Redis)', () => {
  const redis = new IORedis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const prefix = `{sy-test-${randomBytes(4).toString('hex')}}:router:`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('shares one count between stores (workers) and sets a TTL', async () => {
    const a = new RedisRetryBudgetStore(redis, prefix, 60_000);
    const b = new RedisRetryBudgetStore(redis, prefix, 60_000);
    await a.spend('job-1');
    await b.spend('job-1');
    expect(await a.spent('job-1')).toBe(2);
    const ttl = await redis.pttl(`${prefix}retry-budget:job-1`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(await new CallRetryBudget(b, 2, 'job-1').exhausted()).toBe(true);
  });

  it('counts concurrent spends exactly', async () => {
    const store = new RedisRetryBudgetStore(redis, prefix);
    await Promise.all(Array.from({ length: 20 }, () => store.spend('job-2')));
    expect(await store.spent('job-2')).toBe(20);
  });

  it('reports the budget used up to exactly one of many workers spending it at once', async () => {
    const workers = Array.from({ length: 4 }, () => new RedisRetryBudgetStore(redis, prefix));
    const spends = await Promise.all(Array.from({ length: 20 }, (_, i) => new CallRetryBudget(workers[i % 4]!, 12, 'job-3').spend()));
    expect(spends.filter(Boolean)).toHaveLength(1);
  });
});
