import { FakeClock } from '../clock';
import { CallRetryBudget, InMemoryRetryBudgetStore, retryBudgetLimit } from './retry-budget';

describe('InMemoryRetryBudgetStore', () => {
  it('counts spends per scope and expires them after the TTL', async () => {
    const clock = new FakeClock();
    const store = new InMemoryRetryBudgetStore(clock, 1000);
    expect(await store.spend('job-1')).toBe(1);
    expect(await store.spend('job-1')).toBe(2);
    expect(await store.spent('job-2')).toBe(0);
    clock.advance(1000);
    expect(await store.spent('job-1')).toBe(0);
  });
});

describe('CallRetryBudget', () => {
  it('is exhausted once the job has spent its limit, across calls', async () => {
    const store = new InMemoryRetryBudgetStore(new FakeClock());
    const first = new CallRetryBudget(store, 3, 'job');
    await first.spend();
    await first.spend();
    const second = new CallRetryBudget(store, 3, 'job');
    expect(await second.exhausted()).toBe(false);
    await second.spend();
    expect(await first.exhausted()).toBe(true);
    expect(await new CallRetryBudget(store, 3, 'other-job').exhausted()).toBe(false);
  });

  it('tells the spend that used up the budget, once, whichever call of the job made it', async () => {
    const store = new InMemoryRetryBudgetStore(new FakeClock());
    const first = new CallRetryBudget(store, 3, 'job');
    const second = new CallRetryBudget(store, 3, 'job');
    expect([await first.spend(), await second.spend(), await first.spend(), await second.spend()]).toEqual([false, false, true, false]);
    expect(await new CallRetryBudget(store, 1, undefined).spend()).toBe(true);
  });

  it('gives a call without a job a budget of its own', async () => {
    const store = new InMemoryRetryBudgetStore(new FakeClock());
    const a = new CallRetryBudget(store, 1, undefined);
    await a.spend();
    expect(await a.exhausted()).toBe(true);
    expect(await new CallRetryBudget(store, 1, undefined).exhausted()).toBe(false);
  });
});

describe('retryBudgetLimit', () => {
  const settings = { retry_budget_per_job: 12, retry_budget_per_task: 1 };
  it('is the base plus a share per task of the job, rounded down', () => {
    expect(retryBudgetLimit(settings, 21)).toBe(33);
    expect(retryBudgetLimit({ ...settings, retry_budget_per_task: 0.5 }, 21)).toBe(22);
    expect(retryBudgetLimit({ ...settings, retry_budget_per_task: 0 }, 50)).toBe(12);
  });

  it('is the base for a call without a known job size', () => {
    expect(retryBudgetLimit(settings, undefined)).toBe(12);
  });
});
