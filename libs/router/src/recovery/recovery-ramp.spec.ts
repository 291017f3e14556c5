import { FakeClock } from '../clock';
import { DEFAULT_RECOVERY_SETTINGS, RecoveryRamp, rampShares } from './recovery-ramp';

describe('rampShares', () => {
  it('keeps the configured steps when they are within the bound', () => {
    expect(rampShares([10, 30, 60, 100], 100)).toEqual([10, 30, 60, 100]);
  });
  it('inserts steps so that no move exceeds the bound', () => {
    const shares = rampShares([10, 30, 60, 100], 15);
    expect(shares).toEqual([10, 25, 30, 45, 60, 75, 90, 100]);
    for (let i = 1; i < shares.length; i++) expect(shares[i]! - shares[i - 1]!).toBeLessThanOrEqual(15);
  });
});

describe('RecoveryRamp', () => {
  it('is at 100 % until tripped', () => {
    expect(new RecoveryRamp().share(0)).toBe(100);
  });

  it('holds 0 for the switch cooldown, then climbs 10 → 30 → 60 → 100 one hold at a time', () => {
    const clock = new FakeClock();
    const ramp = new RecoveryRamp({ ...DEFAULT_RECOVERY_SETTINGS, maxStepPoints: 100 });
    ramp.trip(clock.now());
    expect(ramp.share(clock.now())).toBe(0);
    clock.advance(89_999);
    expect(ramp.share(clock.now())).toBe(0);
    const seen: number[] = [];
    clock.advance(1);
    for (let i = 0; i < 4; i++) {
      seen.push(ramp.share(clock.now()));
      clock.advance(DEFAULT_RECOVERY_SETTINGS.holdMs);
    }
    expect(seen).toEqual([10, 30, 60, 100]);
    expect(ramp.recovering).toBe(false);
  });

  it('starts over when tripped again mid-ramp', () => {
    const clock = new FakeClock();
    const ramp = new RecoveryRamp({ ...DEFAULT_RECOVERY_SETTINGS, maxStepPoints: 100 });
    ramp.trip(clock.now());
    clock.advance(90_000 + 30_000);
    expect(ramp.share(clock.now())).toBe(30);
    ramp.trip(clock.now());
    expect(ramp.share(clock.now())).toBe(0);
  });
});
