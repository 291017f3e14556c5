import { scoreTargets, stepSplitWeights, type SplitWeights, type TargetPerformance, type WeightSettings } from './dynamic-weights';

const settings: WeightSettings = { maxStepPoints: 15, minChangeIntervalMs: 300_000, minRequests: 20, latencyPenalty: 30, costPenalty: 20, minPoints: 1 };
const healthy: TargetPerformance = { requests: 100, successRate: 1, latencyP50Ms: 200, price: 0.001 };
const split = (current: number[], configured = [80, 20], changedAt: (number | null)[] = current.map(() => null)): SplitWeights => ({ configured, current, changedAt });

/** A fake clock: minutes since the start. */
const minute = (m: number) => m * 60_000;

describe('dynamic weights: score', () => {
  it('is the success rate in points, less latency and cost penalties relative to the best of the split', () => {
    const [fast, slow, dear] = scoreTargets(
      [healthy, { ...healthy, latencyP50Ms: 400 }, { ...healthy, price: 0.004, successRate: 0.9 }],
      settings,
    );
    expect(fast!.score).toBe(100);
    // Twice as slow: half-way behind → 15 of the 30 latency points.
    expect(slow!.score).toBe(85);
    // 90 % success, four times the price: 90 − 20·0.75.
    expect(dear!.score).toBe(75);
  });

  it('is unknown below min_requests', () => {
    expect(scoreTargets([{ ...healthy, requests: 19 }], settings)[0]!.score).toBeNull();
    expect(scoreTargets([{ ...healthy, successRate: null }], settings)[0]!.score).toBeNull();
  });
});

describe('dynamic weights: step', () => {
  const failingPrimary = scoreTargets([{ ...healthy, successRate: 0.2 }, healthy], settings);

  it('moves a weight at most max_step_points per step toward configured × score', () => {
    const { next, changes } = stepSplitWeights(split([80, 20]), failingPrimary, settings, minute(0));
    // Desired: 100 × 80·20 / (80·20 + 20·100) = 44.4 for the primary; the move is capped at 15.
    expect(changes.map((c) => [c.from, c.to])).toEqual([
      [80, 65],
      [20, 35],
    ]);
    expect(changes[0]!.desired).toBeCloseTo(44.444, 2);
    expect(next.current).toEqual([65, 35]);
  });

  it('moves a weight at most once per min_change_interval, then again', () => {
    let weights = split([80, 20]);
    const moves: number[][] = [];
    for (let m = 0; m <= 20; m += 1) {
      const { next, changes } = stepSplitWeights(weights, failingPrimary, settings, minute(m));
      if (changes.length > 0) moves.push([m, ...next.current]);
      weights = next;
    }
    // Minutes 0, 5, 10: 80 → 65 → 50 → 44.444 (the desired weight reached), then nothing more.
    expect(moves.map((move) => move[0])).toEqual([0, 5, 10]);
    expect(weights.current[0]).toBeCloseTo(44.444, 2);
    for (let i = 1; i < moves.length; i += 1) expect(Math.abs(moves[i]![1]! - moves[i - 1]![1]!)).toBeLessThanOrEqual(15);
  });

  it('reads both bounds from the settings', () => {
    const fast = { ...settings, maxStepPoints: 5, minChangeIntervalMs: 60_000 };
    const first = stepSplitWeights(split([80, 20]), failingPrimary, fast, minute(0));
    expect(first.next.current).toEqual([75, 25]);
    expect(stepSplitWeights(first.next, failingPrimary, fast, minute(0.5)).changes).toEqual([]);
    expect(stepSplitWeights(first.next, failingPrimary, fast, minute(1)).next.current).toEqual([70, 30]);
  });

  it('counts points of the configured total, whatever its scale', () => {
    const { next } = stepSplitWeights(split([3, 1], [3, 1]), failingPrimary, settings, 0);
    // 15 points of a total of 4 = 0.6.
    expect(next.current).toEqual([2.4, 1.6]);
  });

  it('brings a recovered target back, step by step, to its configured weight', () => {
    let weights = split([20, 80], [80, 20]);
    const healthyBoth = scoreTargets([healthy, healthy], settings);
    for (let m = 0; m <= 30; m += 5) weights = stepSplitWeights(weights, healthyBoth, settings, minute(m)).next;
    expect(weights.current).toEqual([80, 20]);
  });

  it('leaves a split alone when a score is unknown or all are equal, and never goes below one point', () => {
    const unknown = scoreTargets([{ ...healthy, requests: 0 }, healthy], settings);
    expect(stepSplitWeights(split([80, 20]), unknown, settings, 0).changes).toEqual([]);
    expect(stepSplitWeights(split([80, 20]), scoreTargets([healthy, healthy], settings), settings, 0).changes).toEqual([]);
    const dead = scoreTargets([{ ...healthy, successRate: 0 }, healthy], settings);
    let weights = split([80, 20]);
    for (let m = 0; m <= 60; m += 5) weights = stepSplitWeights(weights, dead, settings, minute(m)).next;
    expect(weights.current).toEqual([1, 99]);
  });
});
