import { FakeClock } from '../clock';
import { FleetHealthBoard, mergeTargetHealth, type TargetHealthReport } from './fleet-health';

const health = (over: Partial<TargetHealthReport> = {}): TargetHealthReport => ({
  target: 't',
  score: 100,
  requests: 10,
  failures: 0,
  firstTokenMeanMs: null,
  firstTokenSamples: 0,
  ...over,
});
const own = (score: number, firstTokenMeanMs: number | null = null, firstTokenSamples = 0) => ({ score, firstTokenMeanMs, firstTokenSamples });

describe('mergeTargetHealth', () => {
  const now = 100_000;

  it('takes the lowest score among this process and its fresh peers', () => {
    const merged = mergeTargetHealth(own(100), [{ reportedAt: now - 1_000, health: health({ score: 40, failures: 2 }) }, { reportedAt: now, health: health({ score: 70 }) }], now, 15_000);
    expect(merged.score).toBe(40);
  });

  it('keeps its own score when it is the lowest', () => {
    expect(mergeTargetHealth(own(10), [{ reportedAt: now, health: health({ score: 90 }) }], now, 15_000).score).toBe(10);
  });

  it('ignores a stale report', () => {
    expect(mergeTargetHealth(own(100), [{ reportedAt: now - 15_001, health: health({ score: 0 }) }], now, 15_000).score).toBe(100);
  });

  it('ignores a peer with no attempts in its window (an old low score is no current opinion)', () => {
    expect(mergeTargetHealth(own(100), [{ reportedAt: now, health: health({ score: 0, requests: 0 }) }], now, 15_000).score).toBe(100);
  });

  it('weighs the first-token means by their sample counts', () => {
    const merged = mergeTargetHealth(own(100, 100, 1), [{ reportedAt: now, health: health({ firstTokenMeanMs: 400, firstTokenSamples: 3 }) }], now, 15_000);
    expect(merged.firstTokenMeanMs).toBe(325);
  });

  it('takes a peer first-token mean when this process has none, and null when nobody has one', () => {
    expect(mergeTargetHealth(own(100), [{ reportedAt: now, health: health({ firstTokenMeanMs: 250, firstTokenSamples: 2 }) }], now, 15_000).firstTokenMeanMs).toBe(250);
    expect(mergeTargetHealth(own(100), [{ reportedAt: now, health: health() }], now, 15_000).firstTokenMeanMs).toBeNull();
  });
});

describe('FleetHealthBoard', () => {
  it('merges the held reports of the named target, and drops them once they age past the bound', () => {
    const clock = new FakeClock(50_000);
    const board = new FleetHealthBoard(clock);
    board.replace([{ processId: 'worker:a', reportedAt: 50_000, targets: [health({ target: 'local', score: 20 }), health({ target: 'cloud', score: 90 })] }], 5_000);
    expect(board.merged('local', own(100)).score).toBe(20);
    expect(board.merged('cloud', own(100)).score).toBe(90);
    expect(board.merged('other', own(100, 300, 1))).toEqual({ score: 100, firstTokenMeanMs: 300 });
    clock.advance(5_001);
    expect(board.merged('local', own(100)).score).toBe(100);
  });

  it('forgets a peer that is no longer reported', () => {
    const clock = new FakeClock(50_000);
    const board = new FleetHealthBoard(clock);
    board.replace([{ processId: 'worker:a', reportedAt: 50_000, targets: [health({ target: 'local', score: 20 })] }], 5_000);
    board.replace([], 5_000);
    expect(board.merged('local', own(100)).score).toBe(100);
  });
});
