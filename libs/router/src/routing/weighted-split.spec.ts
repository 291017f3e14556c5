import { RequestMetaSchema, type RequestMetaInput } from '@switchyard/contracts';
import { parseRouterConfig } from '../config/router-config.loader';
import type { CandidateFilter } from './candidate-filter';
import { decideRoute } from './decide';
import { NoEligibleTargetError } from './no-eligible-target.error';
import { effectiveShares, hashUnit, randomSplitOrder, stickySplitOrder } from './weighted-split';

const meta = (input: RequestMetaInput = {}) => RequestMetaSchema.parse(input);

const target = (name: string, type = 'local') => `
    - {name: ${name}, type: ${type}, endpoint: 'http://127.0.0.1:9000/v1', model: m, max_concurrency: 4, context_window: 8192, cost_per_1k_tokens: {input: 0.001, output: 0.001}}`;

const config = parseRouterConfig(
  `
router:
  targets:${target('small')}${target('big')}${target('cloud', 'cloud')}${target('spare')}
  routes:
    - name: canary_split
      when: {all_else: true}
      targets: [{name: small, weight: 90}, {name: big, weight: 10}]
    - name: three_way
      when: {task_type: code}
      targets: [{name: small, weight: 50}, {name: big, weight: 30}, {name: cloud, weight: 20}, {name: spare, weight: 0}]
      priority: 10
`,
  'weighted-split.spec',
);

/** A seeded PRNG (mulberry32), so the statistical tests are repeatable. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const dropping =
  (...names: string[]): CandidateFilter =>
  (t) =>
    names.includes(t.name) ? { reason: 'unhealthy' } : null;

function tally(choose: (i: number) => string, n: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i += 1) {
    const name = choose(i);
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

describe('weighted splits', () => {
  it('splits random calls by weight within a statistical tolerance (90/10 over 10,000 calls: 10 % ± 1)', () => {
    const random = seeded(7);
    const counts = tally(() => decideRoute(config, meta(), { random }).target.name, 10_000);
    // σ of the share is √(0.1·0.9/10000) = 0.3 %: ±1 % is more than three σ.
    expect(counts.big! / 10_000).toBeGreaterThan(0.09);
    expect(counts.big! / 10_000).toBeLessThan(0.11);
  });

  it('splits jobs by weight: 5,000 job ids on 50/30/20 land within ±2.5 points of each share', () => {
    const counts = tally((i) => decideRoute(config, meta({ task_type: 'code' }), { stickyKey: `job-${i}` }).target.name, 5_000);
    expect(counts.small! / 5_000).toBeCloseTo(0.5, 1);
    expect(Math.abs(counts.big! / 5_000 - 0.3)).toBeLessThan(0.025);
    expect(Math.abs(counts.cloud! / 5_000 - 0.2)).toBeLessThan(0.025);
    expect(counts.spare).toBeUndefined();
  });

  it('keeps every call of one job on one target, whatever the random draw', () => {
    for (let job = 0; job < 200; job += 1) {
      const random = seeded(job);
      const first = decideRoute(config, meta(), { stickyKey: `job-${job}`, random }).target.name;
      for (let call = 0; call < 5; call += 1) expect(decideRoute(config, meta(), { stickyKey: `job-${job}`, random }).target.name).toBe(first);
    }
  });

  it('moves only the filtered target’s jobs, spread over the rest in proportion to weight', () => {
    const jobs = Array.from({ length: 4_000 }, (_, i) => `job-${i}`);
    const before = jobs.map((job) => decideRoute(config, meta({ task_type: 'code' }), { stickyKey: job }).target.name);
    const after = jobs.map((job) => decideRoute(config, meta({ task_type: 'code' }), { stickyKey: job, filters: [dropping('big')] }).target.name);
    const moved = jobs.filter((_, i) => before[i] !== after[i]);
    // Every job that moved was on `big`; every job on `big` moved.
    expect(moved.every((job) => before[jobs.indexOf(job)] === 'big')).toBe(true);
    expect(moved.length).toBe(before.filter((name) => name === 'big').length);
    // big's 30 % goes to small and cloud as 50 : 20.
    const toSmall = moved.filter((job) => after[jobs.indexOf(job)] === 'small').length / moved.length;
    expect(Math.abs(toSmall - 50 / 70)).toBeLessThan(0.05);
  });

  it('obeys the sensitivity constraint: a sensitive call never gets the cloud target of a split', () => {
    const counts = tally((i) => decideRoute(config, meta({ task_type: 'code', sensitivity: 'sensitive' }), { stickyKey: `j${i}` }).target.name, 2_000);
    expect(counts.cloud).toBeUndefined();
    expect(Math.abs(counts.small! / 2_000 - 50 / 80)).toBeLessThan(0.04);
  });

  it('uses a weight-0 standby only when every weighted target is out, and fails with the full explanation when nothing is left', () => {
    const decision = decideRoute(config, meta({ task_type: 'code' }), { stickyKey: 'j', filters: [dropping('small', 'big', 'cloud')] });
    expect(decision.target.name).toBe('spare');
    expect(decision.split?.targets.find((t) => t.target === 'spare')).toMatchObject({ weight: 0, share: 100, eligible: true });
    const noFallback = parseRouterConfig(
      `
router:
  fallback_to_any_eligible: false
  targets:${target('small')}${target('big')}
  routes:
    - {name: split, when: {all_else: true}, targets: [{name: small, weight: 1}, {name: big, weight: 3}]}
`,
      'no-fallback',
    );
    const error = (() => {
      try {
        decideRoute(noFallback, meta(), { filters: [dropping('small', 'big')] });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(NoEligibleTargetError);
    expect((error as NoEligibleTargetError).explanation.split?.targets.map((t) => t.eligible)).toEqual([false, false]);
  });

  it('explains the split: weights, whether the key was sticky, and each share once filtered targets are dropped', () => {
    const decision = decideRoute(config, meta({ task_type: 'code' }), { stickyKey: 'job-1', filters: [dropping('big')] });
    expect(decision.split).toEqual({
      rule: 'three_way',
      sticky: true,
      targets: [
        { target: 'small', weight: 50, share: 71.4, eligible: true },
        { target: 'big', weight: 30, share: 0, eligible: false, reason: 'unhealthy' },
        { target: 'cloud', weight: 20, share: 28.6, eligible: true },
        { target: 'spare', weight: 0, share: 0, eligible: true },
      ],
    });
  });

  it('follows the weights it is given (dynamic weights) instead of the configured ones', () => {
    const random = seeded(3);
    const counts = tally(() => decideRoute(config, meta(), { random, weightsOf: () => [50, 50] }).target.name, 4_000);
    expect(Math.abs(counts.big! / 4_000 - 0.5)).toBeLessThan(0.03);
  });
});

describe('weighted split helpers', () => {
  it('hashUnit is uniform in (0, 1) and differs per target', () => {
    const values = Array.from({ length: 10_000 }, (_, i) => hashUnit(`job-${i}`, 'a'));
    expect(Math.min(...values)).toBeGreaterThan(0);
    expect(Math.max(...values)).toBeLessThan(1);
    const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.01);
    expect(hashUnit('job-1', 'a')).not.toBe(hashUnit('job-1', 'b'));
  });

  it('orders standbys last and keeps a sticky order stable', () => {
    expect(stickySplitOrder([0, 5, 5], ['a', 'b', 'c'], 'k').at(-1)).toBe(0);
    expect(stickySplitOrder([1, 2, 3], ['a', 'b', 'c'], 'k')).toEqual(stickySplitOrder([1, 2, 3], ['a', 'b', 'c'], 'k'));
    expect(randomSplitOrder([1, 0], () => 0.5)).toEqual([0, 1]);
  });

  it('shares the dropped targets’ weight among the rest', () => {
    expect(effectiveShares([90, 10], [true, true])).toEqual([90, 10]);
    expect(effectiveShares([90, 10], [false, true])).toEqual([0, 100]);
    expect(effectiveShares([60, 30, 10], [true, false, true])).toEqual([85.7, 0, 14.3]);
    expect(effectiveShares([5, 0, 0], [false, true, true])).toEqual([0, 100, 0]);
  });
});
