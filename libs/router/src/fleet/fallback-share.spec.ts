import { fallbackShare } from './fallback-share';

describe('fallbackShare', () => {
  it('splits a limit evenly over the live processes, rounding down', () => {
    expect(fallbackShare(8, 4)).toBe(2);
    expect(fallbackShare(8, 3)).toBe(2);
    expect(fallbackShare(100, 1)).toBe(100);
  });

  it('leaves every process at least one call, and no limit stays no limit', () => {
    expect(fallbackShare(3, 5)).toBe(1);
    expect(fallbackShare(undefined, 4)).toBeUndefined();
  });

  it('takes an unknown or zero process count as one process', () => {
    expect(fallbackShare(6, 0)).toBe(6);
  });

  it('keeps the fleet within the limit whenever there are no more processes than the limit', () => {
    for (let limit = 1; limit <= 40; limit += 1) {
      for (let processes = 1; processes <= limit; processes += 1) expect(fallbackShare(limit, processes)! * processes).toBeLessThanOrEqual(limit);
    }
  });
});
