import { createHash, randomBytes } from 'node:crypto';
import IORedis from 'ioredis';
import { waitFor } from '@switchyard/devkit';
import { GatewayResponseStore } from './gateway-response.store';

describe('GatewayResponseStore (real Redis)', () => {
  const redis = new IORedis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const prefix = `{sy-test-${randomBytes(4).toString('hex')}}:gateway:`;
  const store = new GatewayResponseStore(redis, prefix);
  const answer = { content: 'hi', model: 'm', target: 't', usage: { inputTokens: 1, outputTokens: 1 } };
  const LEASE_MS = 60_000;

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('lets exactly one of two racing requests claim a key; the answer is then replayed; another body is a mismatch', async () => {
    const claims = await Promise.all([store.claim('acme', 'k1', 'fp', LEASE_MS), store.claim('acme', 'k1', 'fp', LEASE_MS)]);
    expect(claims.map((c) => c.kind).sort()).toEqual(['claimed', 'in_progress']);
    await store.complete('acme', 'k1', 'fp', answer, 60);
    expect(await store.claim('acme', 'k1', 'fp', LEASE_MS)).toEqual({ kind: 'answered', answer });
    expect(await store.claim('acme', 'k1', 'other', LEASE_MS)).toEqual({ kind: 'mismatch' });
    // Keys are per tenant.
    expect((await store.claim('globex', 'k1', 'other', LEASE_MS)).kind).toBe('claimed');
  });

  it('frees a key whose call failed, and caches per tenant with a TTL', async () => {
    const claim = await store.claim('acme', 'k2', 'fp', LEASE_MS);
    if (claim.kind !== 'claimed') throw new Error(`expected a claim, got ${claim.kind}`);
    await store.release('acme', 'k2', claim.owner);
    expect((await store.claim('acme', 'k2', 'fp', LEASE_MS)).kind).toBe('claimed');
    await store.cache('acme', 'c1', answer, 30);
    expect(await store.cached('acme', 'c1')).toEqual(answer);
    expect(await store.cached('globex', 'c1')).toBeUndefined();
    expect(await redis.ttl(`${prefix}cache:acme:c1`)).toBeGreaterThan(0);
  });

  it('a claim whose owner stopped renewing (crashed) lapses with its lease: the retry proceeds; a late owner cannot renew or free the new claim', async () => {
    const crashed = await store.claim('acme', 'k3', 'fp', 300);
    if (crashed.kind !== 'claimed') throw new Error(`expected a claim, got ${crashed.kind}`);
    expect((await store.claim('acme', 'k3', 'fp', LEASE_MS)).kind).toBe('in_progress');
    const retry = await waitFor('the lease to lapse', async () => {
      const claim = await store.claim('acme', 'k3', 'fp', LEASE_MS);
      return claim.kind === 'claimed' ? claim : undefined;
    }, 5_000, 50);
    expect(await store.renew('acme', 'k3', crashed.owner, LEASE_MS)).toBe(false);
    await store.release('acme', 'k3', crashed.owner);
    expect((await store.claim('acme', 'k3', 'fp', LEASE_MS)).kind).toBe('in_progress');
    expect(await store.renew('acme', 'k3', retry.owner, LEASE_MS)).toBe(true);
  });

  it('a renewed claim outlives its first lease', async () => {
    const claim = await store.claim('acme', 'k4', 'fp', 1_000);
    if (claim.kind !== 'claimed') throw new Error(`expected a claim, got ${claim.kind}`);
    expect(await store.renew('acme', 'k4', claim.owner, LEASE_MS)).toBe(true);
    expect(await redis.pttl(`${prefix}idem:acme:${createHash('sha256').update('k4').digest('base64url')}`)).toBeGreaterThan(1_000);
  });
});
