import type { RoutingExplanation } from '@switchyard/router';
import { QueueFullError, QueueTimeoutError, SlotWaitQueue, waitingForSlotCanHelp, type QueueTimers } from './slot-wait-queue';

/** Timers driven by the test: `advance` runs what falls due. */
class ManualTimers implements QueueTimers {
  private time = 0;
  private timers: { at: number; run: () => void; cancelled: boolean }[] = [];

  now(): number {
    return this.time;
  }

  schedule(ms: number, run: () => void): () => void {
    const timer = { at: this.time + ms, run, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  advance(ms: number): void {
    this.time += ms;
    const due = this.timers.filter((t) => !t.cancelled && t.at <= this.time);
    this.timers = this.timers.filter((t) => !due.includes(t));
    for (const timer of due) timer.run();
  }
}

const settled = async () => {
  for (let i = 0; i < 5; i += 1) await Promise.resolve();
};

function track(promise: Promise<void>) {
  const state: { done: boolean; error?: unknown } = { done: false };
  promise.then(
    () => (state.done = true),
    (error: unknown) => {
      state.done = true;
      state.error = error;
    },
  );
  return state;
}

describe('SlotWaitQueue', () => {
  let timers: ManualTimers;
  let limits: { capacity: number; timeoutMs: number };
  let queue: SlotWaitQueue;

  beforeEach(() => {
    timers = new ManualTimers();
    limits = { capacity: 3, timeoutMs: 1_000 };
    queue = new SlotWaitQueue(() => limits, timers);
  });

  it('wakes waiters first come, first served, one per freed slot', async () => {
    const tickets = [queue.admit(), queue.admit(), queue.admit()];
    const waits = tickets.map((ticket) => track(queue.wait(ticket)));
    queue.slotFreed();
    await settled();
    expect(waits.map((w) => w.done)).toEqual([true, false, false]);
    queue.slotFreed();
    await settled();
    expect(waits.map((w) => w.done)).toEqual([true, true, false]);
    // Woken calls stay in line until they leave (with a slot, or giving up).
    expect(queue.inLine).toBe(3);
    queue.leave(tickets[0]!);
    queue.leave(tickets[1]!);
    expect(queue.inLine).toBe(1);
  });

  it('refuses a call beyond capacity, and admits again once one leaves', () => {
    const tickets = [queue.admit(), queue.admit(), queue.admit()];
    expect(() => queue.admit()).toThrow(QueueFullError);
    queue.leave(tickets[0]!);
    expect(queue.admit().number).toBe(3);
  });

  it('gives up at the deadline, counted from admission across waits, and leaves the line', async () => {
    const ticket = queue.admit();
    const first = track(queue.wait(ticket));
    timers.advance(600);
    queue.slotFreed();
    await settled();
    expect(first.done).toBe(true);
    // Woken, found no slot, waits again with what is left of its time.
    const second = track(queue.wait(ticket));
    timers.advance(399);
    await settled();
    expect(second.done).toBe(false);
    timers.advance(1);
    await settled();
    expect(second.error).toBeInstanceOf(QueueTimeoutError);
    // Nobody is left to wake: a freed slot goes nowhere.
    queue.slotFreed();
    await expect(queue.wait(ticket)).rejects.toBeInstanceOf(QueueTimeoutError);
  });

  it('a woken call that cannot use the slot keeps its place and passes the turn to the next one', async () => {
    const [a, b, c] = [queue.admit(), queue.admit(), queue.admit()];
    const waitA = track(queue.wait(a));
    const waitB = track(queue.wait(b));
    const waitC = track(queue.wait(c));
    queue.slotFreed();
    await settled();
    expect(waitA.done).toBe(true);
    // A found the slot unusable (another target's): it waits again, and B tries.
    const againA = track(queue.wait(a));
    queue.passOn(a);
    await settled();
    expect([againA.done, waitB.done, waitC.done]).toEqual([false, true, false]);
    // The next freed slot goes to A again, ahead of C.
    queue.slotFreed();
    await settled();
    expect([againA.done, waitC.done]).toEqual([true, false]);
  });

  it('a caller that goes away leaves the line', async () => {
    const abort = new AbortController();
    const gone = track(queue.wait(queue.admit(), abort.signal));
    const next = track(queue.wait(queue.admit()));
    abort.abort(new Error('client went away'));
    await settled();
    expect((gone.error as Error).message).toBe('client went away');
    queue.slotFreed();
    await settled();
    expect(next.done).toBe(true);
  });
});

describe('waitingForSlotCanHelp', () => {
  const explanation = (...reasons: (string | undefined)[]): RoutingExplanation => ({
    policy: 'local_first',
    matchedRules: ['r'],
    candidates: reasons.map((reason, i) => ({ target: `t${i}`, rule: 'r', eligible: false, ...(reason === undefined ? {} : { reason }) })),
  });

  it('is true when some candidate is only full, false when all are down or forbidden', () => {
    expect(waitingForSlotCanHelp(explanation('concurrency_full', 'breaker_open'))).toBe(true);
    expect(waitingForSlotCanHelp(explanation('overloaded'))).toBe(true);
    expect(waitingForSlotCanHelp(explanation('breaker_open', 'sensitive_requires_local', 'drained'))).toBe(false);
    expect(waitingForSlotCanHelp(explanation())).toBe(false);
  });
});
