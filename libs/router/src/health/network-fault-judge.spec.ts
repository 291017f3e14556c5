import { FakeClock } from '../clock';
import { NetworkFaultJudge } from './network-fault-judge';

describe('NetworkFaultJudge ("is it me or them", fake clock)', () => {
  it('the first connect failure after things were well is held and checked: it may be our network', () => {
    const clock = new FakeClock();
    const judge = new NetworkFaultJudge(10_000);
    expect(judge.connectFailure('a', clock.now(), 3)).toBe('check');
    expect(judge.state).toBe('checking');
    expect(judge.connectFailure('a', clock.now(), 3)).toBe('hold');
    expect(judge.connectFailure('b', clock.now(), 3)).toBe('hold');
  });

  it('after a remote verdict a single failing target is charged at once for the window; two failing targets check again', () => {
    const clock = new FakeClock();
    const judge = new NetworkFaultJudge(10_000);
    judge.connectFailure('a', clock.now(), 3);
    // Another target answered: our network works, the held failure is a's.
    expect(judge.success(clock.now())).toBe('remote');
    clock.advance(100);
    expect(judge.connectFailure('a', clock.now(), 3)).toBe('charge');
    clock.advance(100);
    expect(judge.connectFailure('a', clock.now(), 3)).toBe('charge');
    clock.advance(2_000);
    expect(judge.connectFailure('b', clock.now(), 3)).toBe('check');
  });

  it('after the window a lone failure is checked again; failures further apart than the window are not one outage', () => {
    const clock = new FakeClock();
    const judge = new NetworkFaultJudge(10_000);
    judge.connectFailure('a', clock.now(), 3);
    judge.checked(true, clock.now());
    expect(judge.connectFailure('a', clock.now(), 3)).toBe('charge');
    clock.advance(5_000);
    expect(judge.connectFailure('a', clock.now(), 3)).toBe('charge');
    clock.advance(5_001);
    expect(judge.connectFailure('b', clock.now(), 3)).toBe('check');
  });

  it('an upstream answer resets the count: failures before it are not part of the next outage', () => {
    const clock = new FakeClock();
    const judge = new NetworkFaultJudge(10_000);
    judge.connectFailure('a', clock.now(), 3);
    judge.checked(true, clock.now());
    judge.connectFailure('a', clock.now(), 3);
    expect(judge.success(clock.now())).toBeNull();
    expect(judge.connectFailure('b', clock.now(), 3)).toBe('charge');
  });

  it('with a single target, its own failure is enough to check even after a remote verdict', () => {
    const judge = new NetworkFaultJudge(10_000);
    judge.connectFailure('only', 0, 1);
    judge.checked(true, 0);
    expect(judge.connectFailure('only', 1, 1)).toBe('check');
  });

  it('the known-good endpoint answers: the targets are down (remote), charges go through again', () => {
    const clock = new FakeClock();
    const judge = new NetworkFaultJudge(10_000);
    judge.connectFailure('a', clock.now(), 2);
    judge.connectFailure('b', clock.now(), 2);
    expect(judge.checked(true, clock.now())).toBe('remote');
    expect(judge.state).toBe('ok');
  });

  it('the known-good endpoint fails too: our fault until a re-check or any answer says the network is back', () => {
    const clock = new FakeClock();
    const judge = new NetworkFaultJudge(10_000);
    judge.connectFailure('a', clock.now(), 2);
    judge.connectFailure('b', clock.now(), 2);
    clock.advance(500);
    expect(judge.checked(false, clock.now())).toBe('local_fault');
    expect(judge.since).toBe(clock.now());
    expect(judge.recentlyFailed(clock.now()).sort()).toEqual(['a', 'b']);
    clock.advance(5_000);
    expect(judge.connectFailure('a', clock.now(), 2)).toBe('hold');
    expect(judge.checked(false, clock.now())).toBeNull();
    expect(judge.checked(true, clock.now())).toBe('recovered');
    expect(judge.state).toBe('ok');
    expect(judge.since).toBeUndefined();

    judge.connectFailure('a', clock.now(), 2);
    judge.connectFailure('b', clock.now(), 2);
    judge.checked(false, clock.now());
    expect(judge.success(clock.now())).toBe('recovered');
  });

  it('an answer while checking means the network works: the held failures are the targets’ (remote)', () => {
    const judge = new NetworkFaultJudge(10_000);
    judge.connectFailure('a', 0, 3);
    judge.connectFailure('b', 0, 3);
    expect(judge.success(1)).toBe('remote');
  });
});
