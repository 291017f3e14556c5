import { LiveInterval } from './live-interval';

describe('LiveInterval', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('waits the delay read before each round, goes on after a failing round, and stops', async () => {
    let delay = 1_000;
    const rounds: number[] = [];
    const errors: unknown[] = [];
    const interval = new LiveInterval(
      () => delay,
      () => {
        rounds.push(Date.now());
        if (rounds.length === 2) throw new Error('round failed');
      },
      (error) => errors.push(error),
    );
    const start = Date.now();
    interval.start();
    await jest.advanceTimersByTimeAsync(999);
    expect(rounds).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(rounds).toEqual([start + 1_000]);
    // A reload shortens the interval: the wait already under way keeps its length, the next ones are short.
    delay = 100;
    await jest.advanceTimersByTimeAsync(1_000);
    expect(rounds.map((at) => at - start)).toEqual([1_000, 2_000]);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(rounds.map((at) => at - start)).toEqual([1_000, 2_000, 2_100, 2_200, 2_300, 2_400, 2_500, 2_600, 2_700, 2_800, 2_900, 3_000]);
    expect(errors).toHaveLength(1);
    interval.stop();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(rounds).toHaveLength(12);
  });
});
