import fc from 'fast-check';
import { decideAdmission, type AdmissionState, type QueuedJob } from './admission';

const job = (jobId: string, tenantId: string): QueuedJob => ({ jobId, tenantId });

describe('decideAdmission', () => {
  it('admits up to each tenant limit, first in first out within a tenant', () => {
    const admitted = decideAdmission({
      queued: [job('a1', 'a'), job('a2', 'a'), job('a3', 'a'), job('b1', 'b')],
      running: { a: 0 },
      limitOf: () => 2,
      globalLimit: 10,
    });
    expect(admitted).toEqual(['a1', 'b1', 'a2']);
  });

  it('gives a free slot to the tenant running the fewest jobs, not to the one that queued first', () => {
    const admitted = decideAdmission({
      queued: [job('a4', 'a'), job('a5', 'a'), job('b1', 'b')],
      running: { a: 3, b: 0 },
      limitOf: () => 10,
      globalLimit: 4,
    });
    expect(admitted).toEqual(['b1']);
  });

  it('breaks a tie by the oldest queued job', () => {
    expect(decideAdmission({ queued: [job('b1', 'b'), job('a1', 'a')], running: { a: 1, b: 1 }, limitOf: () => 5, globalLimit: 3 })).toEqual(['b1']);
  });

  it('admits nothing when the global limit is reached', () => {
    expect(decideAdmission({ queued: [job('a1', 'a')], running: { b: 4 }, limitOf: () => 5, globalLimit: 4 })).toEqual([]);
  });

  it('serves a quiet tenant at the first free slot while another floods the queue', () => {
    const flood = Array.from({ length: 100 }, (_, i) => job(`a${i}`, 'a'));
    const admitted = decideAdmission({ queued: [...flood, job('b1', 'b')], running: { a: 3 }, limitOf: () => 50, globalLimit: 4 });
    expect(admitted).toEqual(['b1']);
  });
});

/** A random world: tenants with limits, a global limit, and jobs arriving over time. */
const worldArbitrary = fc.record({
  limits: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 5 }),
  globalLimit: fc.integer({ min: 1, max: 8 }),
  arrivals: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 3 })), { minLength: 1, maxLength: 60 }),
  completions: fc.array(fc.nat(), { minLength: 0, maxLength: 200 }),
});

interface World {
  limits: number[];
  globalLimit: number;
  arrivals: Array<[number, number]>;
  completions: number[];
}

/**
 * Runs the world: each round some jobs arrive, admission runs, then one running job
 * completes (picked by `completions`). After the arrivals end, jobs keep completing until
 * the queue is empty. Every decision is checked against the invariants.
 */
function simulate(world: World) {
  const tenants = world.limits.map((_, i) => `t${i}`);
  const limitOf = (tenant: string) => world.limits[Number(tenant.slice(1))]!;
  const queued: QueuedJob[] = [];
  const runningJobs: QueuedJob[] = [];
  const admissionOrder: QueuedJob[] = [];
  let seq = 0;
  let rounds = 0;
  const maxRounds = world.arrivals.length + 60 * 4 + 10;

  const runningCounts = () => {
    const counts: Record<string, number> = {};
    for (const j of runningJobs) counts[j.tenantId] = (counts[j.tenantId] ?? 0) + 1;
    return counts;
  };

  while ((rounds < world.arrivals.length || queued.length > 0) && rounds < maxRounds) {
    const arrival = world.arrivals[rounds];
    if (arrival) {
      const [tenantPick, count] = arrival;
      for (let i = 0; i < count; i += 1) queued.push(job(`j${seq++}`, tenants[tenantPick % tenants.length]!));
    }
    const state: AdmissionState = { queued: [...queued], running: runningCounts(), limitOf, globalLimit: world.globalLimit };
    const admitted = decideAdmission(state);
    for (const id of admitted) {
      const index = queued.findIndex((q) => q.jobId === id);
      expect(index).toBeGreaterThanOrEqual(0);
      const [taken] = queued.splice(index, 1);
      runningJobs.push(taken!);
      admissionOrder.push(taken!);
    }
    const counts = runningCounts();
    // Never over a tenant's limit or the global limit.
    expect(runningJobs.length).toBeLessThanOrEqual(world.globalLimit);
    for (const [tenant, n] of Object.entries(counts)) expect(n).toBeLessThanOrEqual(limitOf(tenant));
    // Work-conserving: a job stays queued only when the global limit or its tenant's limit is full.
    if (runningJobs.length < world.globalLimit) {
      for (const q of queued) expect(counts[q.tenantId] ?? 0).toBe(limitOf(q.tenantId));
    }
    if (runningJobs.length > 0) {
      const pick = world.completions[rounds % Math.max(world.completions.length, 1)] ?? 0;
      runningJobs.splice(pick % runningJobs.length, 1);
    }
    rounds += 1;
  }
  return { queued, admissionOrder, seq };
}

describe('decideAdmission properties', () => {
  it('never exceeds a limit, wastes no slot, and admits every queued job eventually (no starvation)', () => {
    fc.assert(
      fc.property(worldArbitrary, (world) => {
        const { queued, admissionOrder, seq } = simulate(world);
        expect(queued).toEqual([]);
        expect(admissionOrder).toHaveLength(seq);
      }),
      { numRuns: 200 },
    );
  });

  it('admits the jobs of one tenant in the order they were queued', () => {
    fc.assert(
      fc.property(worldArbitrary, (world) => {
        const { admissionOrder } = simulate(world);
        const byTenant = new Map<string, number[]>();
        for (const j of admissionOrder) byTenant.set(j.tenantId, [...(byTenant.get(j.tenantId) ?? []), Number(j.jobId.slice(1))]);
        for (const order of byTenant.values()) expect(order).toEqual([...order].sort((x, y) => x - y));
      }),
      { numRuns: 200 },
    );
  });

  it('lets no tenant wait while another tenant with more running jobs takes a slot', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.boolean()), { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 4, maxLength: 4 }),
        fc.integer({ min: 1, max: 12 }),
        (entries, runningList, globalLimit) => {
          const queued = entries.map(([t], i) => job(`j${i}`, `t${t}`));
          const running = Object.fromEntries(runningList.map((n, i) => [`t${i}`, n]));
          const admitted = decideAdmission({ queued, running, limitOf: () => 5, globalLimit });
          const stillQueued = queued.filter((q) => !admitted.includes(q.jobId));
          const after = { ...running };
          for (const id of admitted) {
            const tenant = queued.find((q) => q.jobId === id)!.tenantId;
            after[tenant] = (after[tenant] ?? 0) + 1;
          }
          // Each admission went to a least-running eligible tenant, so a tenant left waiting
          // (with room under its own limit) never runs two fewer jobs than one that was served.
          for (const waiting of stillQueued) {
            if ((after[waiting.tenantId] ?? 0) >= 5) continue;
            for (const id of admitted) {
              const servedTenant = queued.find((q) => q.jobId === id)!.tenantId;
              expect(after[servedTenant]! - 1).toBeLessThanOrEqual(after[waiting.tenantId] ?? 0);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
