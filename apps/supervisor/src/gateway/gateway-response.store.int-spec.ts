import { randomBytes } from 'node:crypto';
import IORedis from 'ioredis';
import { GatewayResponseStore } from './gateway-response.store';

describe('GatewayResponseStore (real Redis)', () => {
  const redis = new IORedis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const prefix = `{sy-test-${randomBytes(4).toString('hex')}}:gateway:`;
  const store = new GatewayResponseStore(redis, prefix);
  const answer = { content: 'hi', model: 'm', target: 't', usage: { inputTokens: 1, outputTokens: 1 } };

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('lets exactly one of two racing requests claim a key; the answer is then replayed; another body is a mismatch', async () => {
    const claims = await Promise.all([store.claim('acme', 'k1', 'fp', 60), store.claim('acme', 'k1', 'fp', 60)]);
    expect(claims.map((c) => c.kind).sort()).toEqual(['claimed', 'in_progress']);
    await store.complete('acme', 'k1', 'fp', answer, 60);
    expect(await store.claim('acme', 'k1', 'fp', 60)).toEqual({ kind: 'answered', answer });
    expect(await store.claim('acme', 'k1', 'other', 60)).toEqual({ kind: 'mismatch' });
    // Keys are per tenant.
    expect(await store.claim('globex', 'k1', 'other', 60)).toEqual({ kind: 'claimed' });
  });

  it('frees a key whose call failed, and caches per tenant with a TTL', async () => {
    await store.claim('acme', 'k2', 'fp', 60);
    await store.release('acme', 'k2');
    expect((await store.claim('acme', 'k2', 'fp', 60)).kind).toBe('claimed');
    await store.cache('acme', 'c1', answer, 30);
    expect(await store.cached('acme', 'c1')).toEqual(answer);
    expect(await store.cached('globex', 'c1')).toBeUndefined();
    expect(await redis.ttl(`${prefix}cache:acme:c1`)).toBeGreaterThan(0);
  });
});
