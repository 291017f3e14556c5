import IORedis from 'ioredis';
import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { createLogger } from '@switchyard/observability';
import { FakeClock } from '../clock';
import type { TargetConfig } from '../config/router-config.schema';
import { RENEW_SCRIPT } from './limiter-scripts';
import { limiterKeys, RedisFleetLimiter, type LimiterRedis } from './redis-fleet-limiter';
import type { HeldSlot } from './target-limiter';

const target = (overrides: Partial<TargetConfig> = {}): TargetConfig => ({
  name: 'gpu',
  type: 'local',
  endpoint: 'http://127.0.0.1:1/v1',
  model: 'm',
  max_concurrency: 3,
  context_window: 8192,
  cost_per_1k_tokens: { input: 0, output: 0 },
  quality: 5,
  timeout_ms: 10_000,
  first_token_timeout_ms: 5_000,
  tokens_per_second: 20,
  ...overrides,
});

async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    if (await condition()) return;
    await new Promise<void>((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition not met');
}

describe('RedisFleetLimiter (real Redis, fake clock)', () => {
  const redis = new IORedis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const prefix = `{sy-test-${randomBytes(4).toString('hex')}:router-limits}:`;
  const limiters: RedisFleetLimiter[] = [];
  let processes = 1;
  let lingerMs = 0;

  function limiter(processId: string, clock: FakeClock, client: LimiterRedis = redis, ttlMs = 5_000): RedisFleetLimiter {
    const made = new RedisFleetLimiter({
      redis: client,
      keyPrefix: prefix,
      processId,
      settings: () => ({ slotTtlMs: ttlMs, redisTimeoutMs: 200, slotLingerMs: lingerMs }),
      liveProcesses: () => Promise.resolve(processes),
      logger: createLogger('fleet-limiter-spec', 'silent'),
      clock,
    });
    limiters.push(made);
    return made;
  }

  afterEach(async () => {
    await Promise.all(limiters.splice(0).map((l) => l.close()));
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    processes = 1;
    lingerMs = 0;
  });
  afterAll(() => redis.quit());

  it('counts max_concurrency across processes and frees a slot on release', async () => {
    const clock = new FakeClock();
    const a = limiter('worker:a', clock);
    const b = limiter('worker:b', clock);
    const gpu = target({ name: 'gpu-1' });
    const first = await a.acquire(gpu, 10);
    const second = await b.acquire(gpu, 10);
    const third = await a.acquire(gpu, 10);
    expect([first.granted, second.granted, third.granted]).toEqual([true, true, true]);
    const fourth = await b.acquire(gpu, 10);
    expect(fourth).toMatchObject({ granted: false, reason: 'concurrency' });
    if (second.granted) second.slot.release();
    const slots = limiterKeys(prefix, 'gpu-1').slots;
    await until(async () => (await redis.zcard(slots)) === 2);
    expect((await b.acquire(gpu, 10)).granted).toBe(true);
    expect((await redis.zrange(slots, '0', '-1')).sort()).toEqual(['worker:a#1', 'worker:a#2', 'worker:b#3']);
  });

  it('a holder that stops renewing (killed) loses its slot after the TTL', async () => {
    const clock = new FakeClock();
    const dead = limiter('worker:dead', clock);
    const alive = limiter('worker:alive', clock);
    const gpu = target({ name: 'gpu-2', max_concurrency: 1 });
    expect((await dead.acquire(gpu, 0)).granted).toBe(true);
    expect(await alive.acquire(gpu, 0)).toMatchObject({ granted: false, reason: 'concurrency' });
    clock.advance(4_999);
    expect((await alive.acquire(gpu, 0)).granted).toBe(false);
    clock.advance(1);
    expect((await alive.acquire(gpu, 0)).granted).toBe(true);
  });

  it('a running call renews its slot, so it outlives the TTL', async () => {
    const clock = new FakeClock();
    const holder = limiter('worker:long', clock, redis, 1_000);
    const other = limiter('worker:other', clock, redis, 1_000);
    const gpu = target({ name: 'gpu-5', max_concurrency: 1 });
    expect((await holder.acquire(gpu, 0)).granted).toBe(true);
    const slots = limiterKeys(prefix, 'gpu-5').slots;
    const firstExpiry = Number(await redis.zscore(slots, 'worker:long#1'));
    clock.advance(900);
    await until(async () => Number(await redis.zscore(slots, 'worker:long#1')) > firstExpiry);
    clock.advance(900);
    expect(await other.acquire(gpu, 0)).toMatchObject({ granted: false, reason: 'concurrency' });
  });

  it('a renewal that lands after its slot lapsed puts it back (its call still runs), and the fleet grants nothing more until it ends', async () => {
    const clock = new FakeClock();
    const slow = limiter('worker:slow', clock, redis, 1_000);
    const other = limiter('worker:other', clock, redis, 1_000);
    const gpu = target({ name: 'gpu-9', max_concurrency: 1 });
    const slots = limiterKeys(prefix, 'gpu-9').slots;
    const first = await slow.acquire(gpu, 0);
    expect(first.granted).toBe(true);
    // Right after a renewal (the next is a third of the TTL away in real time), no renewal lands
    // for a whole TTL of the fake clock, as in a paused process: the slot lapses and goes to another.
    clock.advance(1);
    const renewedTo = clock.now() + 1_000;
    await until(async () => Number(await redis.zscore(slots, 'worker:slow#1')) === renewedTo);
    clock.advance(1_000);
    const second = await other.acquire(gpu, 0);
    expect(second.granted).toBe(true);
    await until(async () => (await redis.zscore(slots, 'worker:slow#1')) !== null);
    expect(await redis.zcount(slots, clock.now() + 1, '+inf')).toBe(2);
    expect(await other.acquire(gpu, 0)).toMatchObject({ granted: false, reason: 'concurrency' });
    if (first.granted) first.slot.release();
    expect(await other.acquire(gpu, 0)).toMatchObject({ granted: false, reason: 'concurrency' });
    if (second.granted) second.slot.release();
    expect((await other.acquire(gpu, 0)).granted).toBe(true);
  });

  it('a renewal that a restarted Redis answers with NOSCRIPT is sent again without a slot released meanwhile', async () => {
    const clock = new FakeClock();
    const renewSha = createHash('sha1').update(RENEW_SCRIPT).digest('hex');
    let releaseDuringRenewal: (() => void) | undefined;
    let renewalsEvaluated = 0;
    const restarted: LimiterRedis = {
      eval: (...args) => {
        if (args[0] === RENEW_SCRIPT) renewalsEvaluated += 1;
        return redis.eval(...args);
      },
      evalsha: (...args) => {
        if (args[0] !== renewSha || releaseDuringRenewal === undefined) return redis.evalsha(...args);
        // The slot ends while this renewal is on the wire, and Redis has lost its scripts.
        releaseDuringRenewal();
        releaseDuringRenewal = undefined;
        return Promise.reject(new Error('NOSCRIPT No matching script. Please use EVAL.'));
      },
      zrem: (...args) => redis.zrem(...args),
      set: (...args) => redis.set(...args),
    };
    const holder = limiter('worker:renewing', clock, restarted, 1_000);
    const gpu = target({ name: 'gpu-10', max_concurrency: 1 });
    const slots = limiterKeys(prefix, 'gpu-10').slots;
    const slot = await holder.acquire(gpu, 0);
    if (!slot.granted) throw new Error('not granted');
    releaseDuringRenewal = () => slot.slot.release();
    await until(() => Promise.resolve(renewalsEvaluated > 0));
    expect(await redis.zscore(slots, 'worker:renewing#1')).toBeNull();
  });

  it('a freed slot lingers for this process’s next call to the target (no round trip), then goes back', async () => {
    lingerMs = 300;
    const clock = new FakeClock();
    let scripts = 0;
    const counting: LimiterRedis = {
      eval: (...args) => {
        scripts += 1;
        return redis.eval(...args);
      },
      evalsha: (...args) => {
        scripts += 1;
        return redis.evalsha(...args);
      },
      zrem: (...args) => redis.zrem(...args),
      set: (...args) => redis.set(...args),
    };
    const sticky = limiter('worker:sticky', clock, counting);
    const other = limiter('worker:other', clock);
    const gpu = target({ name: 'gpu-6', max_concurrency: 2 });
    const slots = limiterKeys(prefix, 'gpu-6').slots;
    const first = await sticky.acquire(gpu, 0);
    const asked = scripts;
    if (first.granted) first.slot.release();
    // Still this process's: the other process gets the one slot left, then finds the target full.
    expect((await other.acquire(gpu, 0)).granted).toBe(true);
    expect(await other.acquire(gpu, 0)).toMatchObject({ granted: false, reason: 'concurrency' });
    // This process takes its lingering slot again without asking Redis.
    const second = await sticky.acquire(gpu, 0);
    expect(second.granted).toBe(true);
    expect(scripts).toBe(asked);
    expect((await redis.zrange(slots, '0', '-1')).filter((h) => h.startsWith('worker:sticky'))).toEqual(['worker:sticky#1']);
    if (second.granted) second.slot.release();
    await until(async () => (await redis.zcard(slots)) === 1);
    expect((await other.acquire(gpu, 0)).granted).toBe(true);
  });

  it('a slot granted when the fleet was full goes back at once: others may be waiting for it', async () => {
    lingerMs = 10_000;
    const clock = new FakeClock();
    const a = limiter('worker:a', clock);
    const gpu = target({ name: 'gpu-8', max_concurrency: 1 });
    const first = await a.acquire(gpu, 0);
    if (first.granted) first.slot.release();
    await until(async () => (await redis.zcard(limiterKeys(prefix, 'gpu-8').slots)) === 0);
  });

  it('a slot of a target with rpm or tpm goes back at once (a quota counts every request)', async () => {
    lingerMs = 10_000;
    const clock = new FakeClock();
    const a = limiter('worker:a', clock);
    const gpu = target({ name: 'gpu-7', max_concurrency: 1, rpm: 100 });
    const first = await a.acquire(gpu, 0);
    if (first.granted) first.slot.release();
    await until(async () => (await redis.zcard(limiterKeys(prefix, 'gpu-7').slots)) === 0);
  });

  it('holds rpm and tpm over a sliding minute', async () => {
    const clock = new FakeClock(1_000_000);
    const a = limiter('worker:a', clock);
    const b = limiter('worker:b', clock);
    const gpu = target({ name: 'gpu-3', max_concurrency: 100, rpm: 2, tpm: 1_000 });
    const one = await a.acquire(gpu, 100);
    const two = await b.acquire(gpu, 100);
    expect([one.granted, two.granted]).toEqual([true, true]);
    const refused = await a.acquire(gpu, 100);
    expect(refused).toMatchObject({ granted: false, reason: 'rpm' });
    expect(refused.granted ? 0 : refused.retryAfterMs).toBe(60_000);
    clock.advance(60_000);
    const tooMany = await a.acquire(target({ name: 'gpu-3', max_concurrency: 100, tpm: 1_000 }), 600);
    expect(tooMany.granted).toBe(true);
    expect(await b.acquire(target({ name: 'gpu-3', max_concurrency: 100, tpm: 1_000 }), 600)).toMatchObject({ granted: false, reason: 'tpm' });
  });

  it('never grants more than max_concurrency under concurrent acquires from many processes (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.constantFrom<'acquire' | 'release' | 'tick'>('acquire', 'acquire', 'release', 'tick'), { minLength: 5, maxLength: 40 }),
        fc.integer({ min: 2, max: 5 }),
        async (maxConcurrency, steps, processCount) => {
          const name = `gpu-p-${randomBytes(3).toString('hex')}`;
          const gpu = target({ name, max_concurrency: maxConcurrency });
          const clock = new FakeClock();
          const fleet = Array.from({ length: processCount }, (_, i) => limiter(`worker:${i}`, clock, redis, 1_000));
          const slots = limiterKeys(prefix, name).slots;
          const live = () => redis.zcount(slots, clock.now() + 1, '+inf');
          const held: HeldSlot[] = [];
          for (const step of steps) {
            if (step === 'acquire') {
              // The renewal timer runs on real time while ticks move the fake clock, so a slot that
              // lapsed may be renewed back in (by design: its call still runs). Renewals only raise
              // the count, so however they interleave, the grants of one round fit in the room
              // left before it.
              const before = await live();
              // Every process asks at once.
              const results = await Promise.all(fleet.map((l) => l.acquire(gpu, 1)));
              const granted = results.flatMap((result) => (result.granted ? [result.slot] : []));
              held.push(...granted);
              expect(granted.length).toBeLessThanOrEqual(Math.max(0, maxConcurrency - before));
            } else if (step === 'release') {
              held.shift()?.release();
            } else {
              clock.advance(400);
            }
            // Only slots someone holds are counted: nothing is granted outside the rounds above.
            expect(await live()).toBeLessThanOrEqual(held.length);
          }
          for (const slot of held) slot.release();
        },
      ),
      { numRuns: 25 },
    );
  });

  it('holds the whole fleet to what the upstream said is left (its x-ratelimit headers), until its reset', async () => {
    const clock = new FakeClock();
    const reporter = limiter('worker:a', clock);
    const other = limiter('worker:b', clock);
    const api = target({ name: 'api-q', max_concurrency: 50 });
    reporter.noteUpstreamQuota(api, { requests: { remaining: 2, resetMs: 60_000 }, tokens: { remaining: 10_000, resetMs: 60_000 } });
    await until(async () => (await redis.get(limiterKeys(prefix, 'api-q').upstreamRequests)) === '2');
    const grants = [await other.acquire(api, 100), await reporter.acquire(api, 100)];
    expect(grants.map((g) => g.granted)).toEqual([true, true]);
    const refused = await other.acquire(api, 100);
    expect(refused).toMatchObject({ granted: false, reason: 'rpm' });
    expect((refused as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(50_000);
    expect(await redis.get(limiterKeys(prefix, 'api-q').upstreamTokens)).toBe('9800');
    // Tokens: a report of fewer tokens left than the request needs refuses it fleet-wide.
    const tpmTarget = target({ name: 'api-t', max_concurrency: 50 });
    reporter.noteUpstreamQuota(tpmTarget, { tokens: { remaining: 50, resetMs: 60_000 } });
    await until(async () => (await redis.get(limiterKeys(prefix, 'api-t').upstreamTokens)) === '50');
    expect(await other.acquire(tpmTarget, 100)).toMatchObject({ granted: false, reason: 'tpm' });
    expect(await other.acquire(tpmTarget, 40)).toMatchObject({ granted: true });
  });

  it('falls back to its share of the limit (limit ÷ live processes) when Redis does not answer', async () => {
    const clock = new FakeClock();
    processes = 4;
    let down = false;
    const never = new Promise<never>(() => undefined);
    const switchable: LimiterRedis = {
      eval: (...args) => (down ? never : redis.eval(...args)),
      evalsha: (...args) => (down ? never : redis.evalsha(...args)),
      zrem: (...args) => (down ? never : redis.zrem(...args)),
      set: (...args) => (down ? never : redis.set(...args)),
    };
    const cut = limiter('worker:w', clock, switchable);
    const gpu = target({ name: 'gpu-4', max_concurrency: 8 });
    // An answered acquire teaches it the fleet size.
    const warm = await cut.acquire(gpu, 0);
    if (warm.granted) warm.slot.release();
    await until(() => Promise.resolve(cut.shareOf(gpu).maxConcurrency === 2));
    down = true;
    let asked = 0;
    const askedBefore = switchable.evalsha;
    switchable.evalsha = (...args) => {
      asked += 1;
      return askedBefore(...args);
    };
    const results = [];
    for (let i = 0; i < 3; i += 1) results.push(await cut.acquire(gpu, 0));
    expect(results.map((r) => r.granted)).toEqual([true, true, false]);
    // Only the first call of the outage waited for Redis; the next ones went straight to the share.
    expect(asked).toBe(1);
    if (results[0]?.granted) results[0].slot.release();
    expect((await cut.acquire(gpu, 0)).granted).toBe(true);
  });
});
