import { FakeClock } from '../clock';
import { CallRetryBudget, InMemoryRetryBudgetStore } from './retry-budget';

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

  it('gives a call without a job a budget of its own', async () => {
    const store = new InMemoryRetryBudgetStore(new FakeClock());
    const a = new CallRetryBudget(store, 1, undefined);
    await a.spend();
    expect(await a.exhausted()).toBe(true);
    expect(await new CallRetryBudget(store, 1, undefined).exhausted()).toBe(false);
  });
});
