import fc from 'fast-check';
import { HealthScore } from './health-score';
import { DEFAULT_HEALTH_SETTINGS } from './health-settings';
import { SlidingWindow, percentile, type WindowSample } from './sliding-window';
import { FakeClock } from '../clock';

describe('HealthScore', () => {
  it('adds 10 per success up to 100 and takes 30 per failure', () => {
    const health = new HealthScore();
    health.recordFailure('server', 0);
    expect(health.score).toBe(70);
    health.recordSuccess();
    expect(health.score).toBe(80);
    for (let i = 0; i < 5; i++) health.recordSuccess();
    expect(health.score).toBe(100);
  });

  it('drops to 0 after three consecutive failures, and a success breaks the streak', () => {
    const health = new HealthScore({ ...DEFAULT_HEALTH_SETTINGS, classThresholds: {} });
    health.recordFailure('unknown', 0);
    health.recordSuccess();
    health.recordFailure('unknown', 0);
    health.recordFailure('unknown', 0);
    expect(health.score).toBe(20); // 70 → 80 → 50 → 20
    health.recordFailure('unknown', 0);
    expect(health.score).toBe(0);
  });

  it('applies the per-class thresholds: network 2, server 3, bad output 5', () => {
    const network = new HealthScore();
    network.recordFailure('network', 0);
    expect(network.score).toBe(70);
    network.recordFailure('network', 0);
    expect(network.score).toBe(0);

    const bad = new HealthScore();
    for (let i = 0; i < 4; i++) bad.recordFailure('bad_output', 0);
    expect(bad.score).toBe(40);
    bad.recordFailure('bad_output', 0);
    expect(bad.score).toBe(0);
  });

  it('ignores rate limits and bad requests', () => {
    const health = new HealthScore();
    health.recordFailure('rate_limited', 0);
    health.recordFailure('bad_request', 0);
    expect(health.score).toBe(100);
  });

  it('excludes a target below the threshold until retryAfterMs after its last failure', () => {
    const clock = new FakeClock();
    const health = new HealthScore();
    health.recordFailure('network', clock.now());
    health.recordFailure('network', clock.now());
    expect(health.isExcluded(clock.now())).toBe(true);
    clock.advance(DEFAULT_HEALTH_SETTINGS.retryAfterMs - 1);
    expect(health.isExcluded(clock.now())).toBe(true);
    clock.advance(1);
    expect(health.isExcluded(clock.now())).toBe(false);
    expect(health.isBelowThreshold()).toBe(true);
  });

  it('a passing probe lifts an excluded target to the threshold', () => {
    const health = new HealthScore();
    health.recordFailure('network', 0);
    health.recordFailure('network', 0);
    health.recordProbeSuccess();
    expect(health.score).toBe(DEFAULT_HEALTH_SETTINGS.threshold);
    expect(health.isExcluded(1)).toBe(false);
  });
});

describe('SlidingWindow', () => {
  it('reports success rate, percentiles, first-token mean and tokens/s over the window', () => {
    const window = new SlidingWindow(8, 60_000);
    for (let i = 1; i <= 4; i++) window.add({ at: 1000, ok: true, latencyMs: i * 100, firstTokenMs: i * 10, outputTokens: 10 });
    window.add({ at: 1000, ok: false, latencyMs: 5000 });
    const stats = window.stats(2000);
    expect(stats.requests).toBe(5);
    expect(stats.successRate).toBeCloseTo(0.8);
    expect(stats.latencyMs).toEqual({ p50: 200, p95: 400 });
    expect(stats.firstTokenMs.mean).toBe(25);
    expect(window.meanFirstTokenMs(2000)).toBe(25);
    expect(stats.tokensPerSecond).toBeGreaterThan(0);
  });

  it('forgets samples older than the window and keeps only the last `size`', () => {
    const window = new SlidingWindow(2, 1000);
    window.add({ at: 0, ok: false, latencyMs: 1 });
    window.add({ at: 5000, ok: true, latencyMs: 1 });
    window.add({ at: 5000, ok: true, latencyMs: 1 });
    expect(window.stats(5000)).toMatchObject({ requests: 2, successRate: 1 });
    expect(window.stats(7000).requests).toBe(0);
  });

  it('keeps the first-token mean equal to the mean over the samples still in the window, through ring wrap, expiry and a new window', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.record({ gapMs: fc.integer({ min: 0, max: 700 }), firstTokenMs: fc.option(fc.integer({ min: 1, max: 5000 }), { nil: undefined }), resize: fc.boolean() }), { maxLength: 40 }),
        (size, steps) => {
          let windowMs = 1000;
          const window = new SlidingWindow(size, windowMs);
          const added: WindowSample[] = [];
          let now = 0;
          for (const step of steps) {
            now += step.gapMs;
            if (step.resize) {
              windowMs = windowMs === 1000 ? 2000 : 1000;
              window.setWindowMs(windowMs);
            }
            const sample: WindowSample = { at: now, ok: true, latencyMs: 1, ...(step.firstTokenMs === undefined ? {} : { firstTokenMs: step.firstTokenMs }) };
            window.add(sample);
            added.push(sample);
            const inWindow = added.slice(-size).filter((s) => now - s.at <= windowMs && s.firstTokenMs !== undefined);
            const expected = inWindow.length === 0 ? null : inWindow.reduce((sum, s) => sum + s.firstTokenMs!, 0) / inWindow.length;
            const actual = window.meanFirstTokenMs(now);
            if (expected === null) expect(actual).toBeNull();
            else expect(actual).toBeCloseTo(expected, 6);
          }
        },
      ),
    );
  });

  it('percentile is nearest-rank', () => {
    expect(percentile([], 0.5)).toBeNull();
    expect(percentile([1, 2, 3, 4], 0.5)).toBe(2);
    expect(percentile([1, 2, 3, 4], 0.95)).toBe(4);
  });
});
