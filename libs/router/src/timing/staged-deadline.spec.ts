import { attemptTotalMs, StagedDeadline } from './staged-deadline';

describe('StagedDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('fires the connect limit when no connection is established', () => {
    const deadline = new StagedDeadline({ connectMs: 100, firstTokenMs: 1000, totalMs: 5000 });
    jest.advanceTimersByTime(100);
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.timedOutStage).toBe('connect');
    deadline.dispose();
  });

  it('fires the first-token limit once connected, counted from the start', () => {
    const deadline = new StagedDeadline({ connectMs: 100, firstTokenMs: 1000, totalMs: 5000 });
    jest.advanceTimersByTime(50);
    deadline.connected();
    jest.advanceTimersByTime(949);
    expect(deadline.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(deadline.timedOutStage).toBe('first_token');
    deadline.dispose();
  });

  it('names the first-token limit when it is tighter than connect, and the total after the first token', () => {
    const early = new StagedDeadline({ connectMs: 3000, firstTokenMs: 200, totalMs: 5000 });
    jest.advanceTimersByTime(200);
    expect(early.timedOutStage).toBe('first_token');
    early.dispose();
    const late = new StagedDeadline({ connectMs: 100, firstTokenMs: 200, totalMs: 500 });
    late.connected();
    late.firstToken();
    jest.advanceTimersByTime(499);
    expect(late.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(late.timedOutStage).toBe('total');
    late.dispose();
  });

  it('keeps one timer through the stages, and each stage still ends at its own limit', () => {
    const deadline = new StagedDeadline({ connectMs: 100, firstTokenMs: 1000, totalMs: 5000 });
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(10);
    deadline.connected();
    jest.advanceTimersByTime(10);
    deadline.firstToken();
    expect(jest.getTimerCount()).toBe(1);
    // The connect timer fires at 100 ms and re-arms itself for the rest of the total budget.
    jest.advanceTimersByTime(80);
    expect(deadline.signal.aborted).toBe(false);
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(4899);
    expect(deadline.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(deadline.timedOutStage).toBe('total');
    expect(jest.getTimerCount()).toBe(0);
    deadline.dispose();
  });

  it('leaves no timer behind when disposed after the first token', () => {
    const deadline = new StagedDeadline({ connectMs: 100, firstTokenMs: 1000, totalMs: 5000 });
    deadline.connected();
    deadline.firstToken();
    deadline.dispose();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(10_000);
    expect(deadline.signal.aborted).toBe(false);
  });

  it('tells a caller abort apart from a timeout', () => {
    const controller = new AbortController();
    const deadline = new StagedDeadline({ connectMs: 100, firstTokenMs: 100, totalMs: 100 }, controller.signal);
    controller.abort();
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.callerAborted).toBe(true);
    expect(deadline.timedOut).toBe(false);
    deadline.dispose();
  });
});

describe('attemptTotalMs', () => {
  const target = { first_token_timeout_ms: 15_000, timeout_ms: 30_000, tokens_per_second: 20 };
  it('is first token + max_tokens at the target speed with slack, capped by the target timeout and the remaining time', () => {
    expect(attemptTotalMs(target, 100, Infinity, null)).toBe(15_000 + 7_500);
    expect(attemptTotalMs(target, 4000, Infinity, null)).toBe(30_000);
    expect(attemptTotalMs(target, 100, 1_000, null)).toBe(1_000);
    expect(attemptTotalMs(target, 100, Infinity, 100)).toBe(15_000 + 1_500);
  });
});
