import { decideReconcile, decideStale } from './sweep-decisions';

const NOW = new Date('2026-11-30T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms);
const policy = { staleAfterMs: 8_000, maxAttempts: 3 };

describe('decideStale', () => {
  it('takes over a task silent for longer than the threshold', () => {
    expect(decideStale({ updatedAt: ago(9_000), retryCount: 0, retryBase: 0, leaseOwner: 'w1' }, NOW, policy)).toEqual({ action: 'requeue' });
  });

  it('leaves a task whose heartbeat is younger than the threshold', () => {
    expect(decideStale({ updatedAt: ago(7_999), retryCount: 0, retryBase: 0, leaseOwner: 'w1' }, NOW, policy)).toEqual({ action: 'skip' });
  });

  it('resumes while attempts remain, and fails the task with a reason at the limit', () => {
    expect(decideStale({ updatedAt: ago(10_000), retryCount: 1, retryBase: 0, leaseOwner: 'w1' }, NOW, policy).action).toBe('requeue');
    const last = decideStale({ updatedAt: ago(10_000), retryCount: 2, retryBase: 0, leaseOwner: 'worker-7' }, NOW, policy);
    expect(last).toEqual({ action: 'fail', reason: expect.stringContaining('retry limit reached') });
    expect(last.action === 'fail' && last.reason).toMatch(/no heartbeat from worker-7 for 10 s on attempt 3 of 3/);
  });

  it('counts the attempts since the job was last retried by request: a retried task has a fresh budget', () => {
    // Failed at the limit (retry_count 3 of 3 attempts), then retried by request (retry_count 4, base 4).
    expect(decideStale({ updatedAt: ago(10_000), retryCount: 4, retryBase: 4, leaseOwner: 'w1' }, NOW, policy).action).toBe('requeue');
    expect(decideStale({ updatedAt: ago(10_000), retryCount: 5, retryBase: 4, leaseOwner: 'w1' }, NOW, policy).action).toBe('requeue');
    const last = decideStale({ updatedAt: ago(10_000), retryCount: 6, retryBase: 4, leaseOwner: 'w1' }, NOW, policy);
    expect(last.action === 'fail' && last.reason).toMatch(/on attempt 3 of 3/);
  });

  it('fails at once with a single attempt allowed', () => {
    expect(decideStale({ updatedAt: ago(60_000), retryCount: 0, retryBase: 0, leaseOwner: null }, NOW, { staleAfterMs: 8_000, maxAttempts: 1 }).action).toBe('fail');
  });
});

describe('decideReconcile', () => {
  const base = { blocked: false, updatedAt: ago(60_000), depsDoneAt: null, queueStates: ['unknown'] };

  it('enqueues a pending task that has no queue job (Redis lost it)', () => {
    expect(decideReconcile(base, NOW, 8_000)).toEqual({ action: 'enqueue' });
  });

  it('leaves a task that waits for unfinished dependencies', () => {
    expect(decideReconcile({ ...base, blocked: true }, NOW, 8_000)).toEqual({ action: 'leave', why: 'blocked' });
  });

  it('leaves a task within the grace period, counted from its last change or its last dependency finishing', () => {
    expect(decideReconcile({ ...base, updatedAt: ago(1_000) }, NOW, 8_000)).toEqual({ action: 'leave', why: 'recent' });
    expect(decideReconcile({ ...base, depsDoneAt: ago(2_000) }, NOW, 8_000)).toEqual({ action: 'leave', why: 'recent' });
    expect(decideReconcile({ ...base, depsDoneAt: ago(9_000) }, NOW, 8_000)).toEqual({ action: 'enqueue' });
  });

  it.each(['waiting', 'delayed', 'prioritized'])('leaves a task whose queue job is %s', (state) => {
    expect(decideReconcile({ ...base, queueStates: ['unknown', state] }, NOW, 8_000)).toEqual({ action: 'leave', why: 'queued' });
  });

  it.each(['completed', 'failed', 'active', 'waiting-children'])('enqueues again when the only queue job is %s', (state) => {
    // active: the worker that held it is gone (the task is pending, not running);
    // waiting-children: Postgres says every dependency is done, the flow parent waits for nothing.
    expect(decideReconcile({ ...base, queueStates: [state] }, NOW, 8_000)).toEqual({ action: 'enqueue' });
  });
});
