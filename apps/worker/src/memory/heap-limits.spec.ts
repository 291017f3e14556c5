import { MAX_YOUNG_GENERATION_BYTES, youngGrowthFactor } from './heap-limits';

describe('youngGrowthFactor', () => {
  const MB = 1024 * 1024;

  it('lets the young generation double while the doubled size stays within the bound', () => {
    expect(youngGrowthFactor(2 * MB)).toBe(2);
    expect(youngGrowthFactor(MAX_YOUNG_GENERATION_BYTES / 2)).toBe(2);
  });

  it('stops its growth at the bound, and past it (an overshoot between two observed GCs)', () => {
    expect(youngGrowthFactor(MAX_YOUNG_GENERATION_BYTES / 2 + 1)).toBe(1);
    expect(youngGrowthFactor(MAX_YOUNG_GENERATION_BYTES)).toBe(1);
    expect(youngGrowthFactor(34 * MB)).toBe(1);
  });
});
