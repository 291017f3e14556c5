import { backoffDelayMs, DEFAULT_BACKOFF_SETTINGS, parseRetryAfterMs } from './backoff';

describe('backoffDelayMs', () => {
  const settings = { ...DEFAULT_BACKOFF_SETTINGS, maxMs: 60_000 };

  it('is 1 s × 2^n plus 0–500 ms of jitter', () => {
    expect(backoffDelayMs(0, settings, () => 0)).toBe(1000);
    expect(backoffDelayMs(1, settings, () => 0)).toBe(2000);
    expect(backoffDelayMs(3, settings, () => 0)).toBe(8000);
    expect(backoffDelayMs(0, settings, () => 0.999)).toBe(1499);
  });

  it('stays within its bounds for any random value', () => {
    for (let n = 0; n < 8; n++) {
      for (const r of [0, 0.25, 0.5, 0.9999]) {
        const delay = backoffDelayMs(n, DEFAULT_BACKOFF_SETTINGS, () => r);
        const exp = Math.min(DEFAULT_BACKOFF_SETTINGS.maxMs, 1000 * 2 ** n);
        expect(delay).toBeGreaterThanOrEqual(exp);
        expect(delay).toBeLessThan(exp + 500);
      }
    }
  });

  it('never waits less than the upstream Retry-After', () => {
    expect(backoffDelayMs(0, settings, () => 0, 5000)).toBe(5000);
    expect(backoffDelayMs(3, settings, () => 0, 10)).toBe(8000);
  });
});

describe('parseRetryAfterMs', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfterMs('2', 0)).toBe(2000);
    expect(parseRetryAfterMs('0.5', 0)).toBe(500);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfterMs(undefined, 0)).toBeUndefined();
    expect(parseRetryAfterMs('soon', 0)).toBeUndefined();
  });
});
