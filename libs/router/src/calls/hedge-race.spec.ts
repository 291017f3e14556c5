import { hedgeRace, type HedgeLeg, type ScheduleTimer } from './hedge-race';

/** A timer driven by hand: `fire()` runs what is due, as if the time had passed. */
function manualTimer() {
  const pending: { ms: number; run: () => void; cancelled: boolean }[] = [];
  const timer: ScheduleTimer = (ms, run) => {
    const entry = { ms, run, cancelled: false };
    pending.push(entry);
    return () => {
      entry.cancelled = true;
    };
  };
  return {
    timer,
    pending,
    fire: () => {
      for (const entry of pending.splice(0)) if (!entry.cancelled) entry.run();
    },
  };
}

/** An attempt the test settles by hand; it rejects with "aborted" when its leg is cancelled. */
function controllable() {
  let settle!: (value: string) => void;
  let leg!: HedgeLeg;
  const started = { value: false };
  const run = (given: HedgeLeg) => {
    leg = given;
    started.value = true;
    return new Promise<string>((resolve) => {
      settle = resolve;
      given.signal.addEventListener('abort', () => resolve('aborted'), { once: true });
    });
  };
  return { run, settle: (value: string) => settle(value), leg: () => leg, started };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('hedgeRace', () => {
  it('a primary that answers before hedge_after_ms: no hedge is started, the timer is cancelled', async () => {
    const t = manualTimer();
    const primary = controllable();
    const hedge = controllable();
    const race = hedgeRace({ hedgeAfterMs: 200, decideOnFirstToken: false, timer: t.timer, succeeded: (r) => r === 'ok', primary: primary.run, hedge: hedge.run });
    expect(t.pending.map((p) => p.ms)).toEqual([200]);
    primary.settle('ok');
    const result = await race;
    t.fire();
    expect(hedge.started.value).toBe(false);
    expect(result).toEqual({ legs: [{ index: 0, result: 'ok', cancelled: false }], winner: 0, hedged: false });
  });

  it('no first token by hedge_after_ms: the hedge starts; it answers first, wins, and the primary is aborted', async () => {
    const t = manualTimer();
    const primary = controllable();
    const hedge = controllable();
    const race = hedgeRace({ hedgeAfterMs: 200, decideOnFirstToken: false, timer: t.timer, succeeded: (r) => r === 'ok', primary: primary.run, hedge: hedge.run });
    t.fire();
    await tick();
    expect(hedge.started.value).toBe(true);
    hedge.settle('ok');
    const result = await race;
    expect(primary.leg().signal.aborted).toBe(true);
    expect(result.winner).toBe(1);
    expect(result.legs).toEqual([
      { index: 0, result: 'aborted', cancelled: true },
      { index: 1, result: 'ok', cancelled: false },
    ]);
  });

  it('a primary with its first token before hedge_after_ms is not hedged, however long it then takes', async () => {
    const t = manualTimer();
    const primary = controllable();
    const hedge = controllable();
    const race = hedgeRace({ hedgeAfterMs: 200, decideOnFirstToken: false, timer: t.timer, succeeded: (r) => r === 'ok', primary: primary.run, hedge: hedge.run });
    primary.leg().firstToken();
    t.fire();
    await tick();
    expect(hedge.started.value).toBe(false);
    primary.settle('ok');
    expect((await race).hedged).toBe(false);
  });

  it('streaming: the first token decides; the loser is aborted at once and only the winner may stream', async () => {
    const t = manualTimer();
    const primary = controllable();
    const hedge = controllable();
    const race = hedgeRace({ hedgeAfterMs: 200, decideOnFirstToken: true, timer: t.timer, succeeded: (r) => r === 'ok', primary: primary.run, hedge: hedge.run });
    expect(primary.leg().mayStream()).toBe(true);
    t.fire();
    await tick();
    expect(primary.leg().mayStream()).toBe(false);
    primary.leg().firstToken();
    expect(hedge.leg().signal.aborted).toBe(true);
    expect(primary.leg().mayStream()).toBe(true);
    expect(hedge.leg().mayStream()).toBe(false);
    primary.settle('ok');
    const result = await race;
    expect(result.winner).toBe(0);
    expect(result.legs.map((l) => [l.index, l.result, l.cancelled])).toEqual([
      [0, 'ok', false],
      [1, 'aborted', true],
    ]);
  });

  it('the hedge fails: the primary goes on and may still win', async () => {
    const t = manualTimer();
    const primary = controllable();
    const hedge = controllable();
    const race = hedgeRace({ hedgeAfterMs: 200, decideOnFirstToken: false, timer: t.timer, succeeded: (r) => r === 'ok', primary: primary.run, hedge: hedge.run });
    t.fire();
    await tick();
    hedge.settle('error');
    await tick();
    expect(primary.leg().signal.aborted).toBe(false);
    primary.settle('ok');
    const result = await race;
    expect(result.winner).toBe(0);
    expect(result.legs.map((l) => l.result)).toEqual(['ok', 'error']);
  });

  it('both fail: no winner, both legs reported, none cancelled', async () => {
    const t = manualTimer();
    const primary = controllable();
    const hedge = controllable();
    const race = hedgeRace({ hedgeAfterMs: 200, decideOnFirstToken: false, timer: t.timer, succeeded: (r) => r === 'ok', primary: primary.run, hedge: hedge.run });
    t.fire();
    await tick();
    primary.settle('error');
    hedge.settle('timeout');
    const result = await race;
    expect(result.winner).toBeUndefined();
    expect(result.legs).toEqual([
      { index: 0, result: 'error', cancelled: false },
      { index: 1, result: 'timeout', cancelled: false },
    ]);
  });

  it('no candidate for the hedge: the primary alone decides, and streams as before', async () => {
    const t = manualTimer();
    const primary = controllable();
    const race = hedgeRace({
      hedgeAfterMs: 200,
      decideOnFirstToken: true,
      timer: t.timer,
      succeeded: (r) => r === 'ok',
      primary: primary.run,
      hedge: () => Promise.resolve(undefined),
    });
    t.fire();
    await tick();
    expect(primary.leg().mayStream()).toBe(true);
    primary.settle('ok');
    expect(await race).toEqual({ legs: [{ index: 0, result: 'ok', cancelled: false }], winner: 0, hedged: false });
  });
});
