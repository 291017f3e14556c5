import type { Logger } from '@switchyard/observability';
import type { Lease } from '@switchyard/state';
import { LeaseHeartbeats, type HeartbeatStore } from './lease-heartbeats';

const lease = (taskId: string, version = 1): Lease => ({ taskId, owner: 'worker-a', version });

/** A store that records each statement (the leases it was given) and answers what `held` says. */
function store(held: (leases: readonly Lease[]) => Promise<Set<string>> = async (leases) => new Set(leases.map((l) => l.taskId))) {
  const statements: string[][] = [];
  const heartbeatMany = jest.fn(async (leases: readonly Lease[]) => {
    statements.push(leases.map((l) => l.taskId));
    return held(leases);
  });
  return { store: { heartbeatMany } satisfies HeartbeatStore, statements };
}

function logger() {
  const warnings: unknown[] = [];
  return { logger: { warn: (obj: unknown) => warnings.push(obj) } as unknown as Logger, warnings };
}

describe('LeaseHeartbeats', () => {
  // Every watch a test leaves running is stopped after it: no heartbeat timer outlives its test.
  const stops: (() => void)[] = [];
  const watching = (heartbeats: LeaseHeartbeats, watched: Lease, onLost: () => void = () => undefined) => {
    const stop = heartbeats.watch(watched, onLost);
    stops.push(stop);
    return stop;
  };
  afterEach(() => {
    stops.splice(0).forEach((stop) => stop());
    jest.useRealTimers();
  });

  it('heartbeats every watched lease of the worker in one statement per interval', async () => {
    jest.useFakeTimers();
    const { store: s, statements } = store();
    const heartbeats = new LeaseHeartbeats(s, 2_000, logger().logger);
    const watched = ['a', 'b', 'c'].map((id) => watching(heartbeats, lease(id)));
    await jest.advanceTimersByTimeAsync(1_999);
    expect(statements).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(statements).toEqual([['a', 'b', 'c']]);
    watched[1]!();
    await jest.advanceTimersByTimeAsync(2_000);
    expect(statements).toEqual([['a', 'b', 'c'], ['a', 'c']]);
    watched[0]!();
    watched[2]!();
    // Nothing watched: no timer left behind.
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(statements).toHaveLength(2);
  });

  it('tells a lease that is no longer held, once, and keeps heartbeating the others', async () => {
    const { store: s, statements } = store(async (leases) => new Set(leases.map((l) => l.taskId).filter((id) => id !== 'taken')));
    const heartbeats = new LeaseHeartbeats(s, 2_000, logger().logger);
    const lost = jest.fn();
    watching(heartbeats, lease('kept'));
    watching(heartbeats, lease('taken'), lost);
    await heartbeats.beat();
    await heartbeats.beat();
    expect(lost).toHaveBeenCalledTimes(1);
    expect(statements).toEqual([['kept', 'taken'], ['kept']]);
  });

  it('does not call a task lost that finished while the beat was in flight', async () => {
    let release!: () => void;
    const { store: s } = store(() => new Promise((resolve) => (release = () => resolve(new Set()))));
    const heartbeats = new LeaseHeartbeats(s, 2_000, logger().logger);
    const lost = jest.fn();
    const stop = watching(heartbeats, lease('finishing'), lost);
    const beat = heartbeats.beat();
    stop();
    release();
    await beat;
    expect(lost).not.toHaveBeenCalled();
  });

  it('keeps a re-claimed lease of the same task apart from the one before it', async () => {
    let release!: () => void;
    const { store: s } = store(() => new Promise((resolve) => (release = () => resolve(new Set()))));
    const heartbeats = new LeaseHeartbeats(s, 2_000, logger().logger);
    const firstLost = jest.fn();
    const secondLost = jest.fn();
    const stopFirst = watching(heartbeats, lease('t', 1), firstLost);
    const beat = heartbeats.beat();
    stopFirst();
    watching(heartbeats, lease('t', 2), secondLost);
    release();
    await beat;
    // The beat carried version 1 only; version 2 was not part of it and is not lost.
    expect(firstLost).not.toHaveBeenCalled();
    expect(secondLost).not.toHaveBeenCalled();
  });

  it('logs a failed write and loses no lease over it', async () => {
    const { store: s } = store(async () => {
      throw new Error('Connection terminated unexpectedly');
    });
    const { logger: log, warnings } = logger();
    const heartbeats = new LeaseHeartbeats(s, 2_000, log);
    const lost = jest.fn();
    watching(heartbeats, lease('a'), lost);
    await heartbeats.beat();
    expect(lost).not.toHaveBeenCalled();
    expect(warnings).toEqual([{ err: 'Connection terminated unexpectedly', leases: 1 }]);
  });

  it('skips a beat while the one before is still in flight, instead of piling statements up', async () => {
    let release!: () => void;
    const { store: s, statements } = store((leases) => new Promise((resolve) => (release = () => resolve(new Set(leases.map((l) => l.taskId))))));
    const heartbeats = new LeaseHeartbeats(s, 2_000, logger().logger);
    watching(heartbeats, lease('a'));
    const slow = heartbeats.beat();
    await heartbeats.beat();
    expect(statements).toHaveLength(1);
    release();
    await slow;
    const next = heartbeats.beat();
    release();
    await next;
    expect(statements).toHaveLength(2);
  });
});
