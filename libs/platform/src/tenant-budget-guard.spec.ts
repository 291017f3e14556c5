import { createLogger } from '@switchyard/observability';
import type { TargetConfig } from '@switchyard/router';
import type { TenantLimits } from '@switchyard/workflows';
import { TenantBudgetGuard } from './tenant-budget-guard';

const limits = (daily: number | null): TenantLimits => ({ max_running_jobs: 2, daily_budget_usd: daily, gateway_rpm: null });

function setup(budgets: Record<string, number | null>, spent: Record<string, number>) {
  let now = 1_000_000;
  const reads: string[] = [];
  const marks: Array<[string, string, unknown]> = [];
  const guard = new TenantBudgetGuard({
    limitsOf: (tenant) => limits(budgets[tenant] ?? null),
    spentTodayUsd: async (tenant) => {
      reads.push(tenant);
      return spent[tenant] ?? 0;
    },
    markDegraded: async (tenant, job, detail) => void marks.push([tenant, job, detail]),
    logger: createLogger('test', 'silent'),
    cacheMs: 5_000,
    now: () => now,
  });
  return { guard, reads, marks, advance: (ms: number) => (now += ms) };
}

const cloud = { type: 'cloud' } as TargetConfig;
const local = { type: 'local' } as TargetConfig;
const meta = {} as never;

describe('TenantBudgetGuard', () => {
  it('adds no filter without a tenant, without a budget, or under it', async () => {
    const { guard, reads } = setup({ under: 10 }, { under: 9.99 });
    expect(await guard.filtersFor({})).toEqual([]);
    expect(await guard.filtersFor({ tenantId: 'nobudget' })).toEqual([]);
    expect(await guard.filtersFor({ tenantId: 'under', jobId: 'j' })).toEqual([]);
    expect(reads).toEqual(['under']);
  });

  it('drops cloud targets once the budget is spent, and records each job once', async () => {
    const { guard, marks } = setup({ spent: 5 }, { spent: 5 });
    const filters = await guard.filtersFor({ tenantId: 'spent', jobId: 'j1' });
    expect(filters.map((f) => f(cloud, meta))).toEqual([{ reason: 'daily_budget_spent' }]);
    expect(filters.map((f) => f(local, meta))).toEqual([null]);
    await guard.filtersFor({ tenantId: 'spent', jobId: 'j1' });
    await guard.filtersFor({ tenantId: 'spent', jobId: 'j2' });
    await guard.filtersFor({ tenantId: 'spent' });
    expect(marks).toEqual([
      ['spent', 'j1', { daily_budget_usd: 5, spent_usd: 5 }],
      ['spent', 'j2', { daily_budget_usd: 5, spent_usd: 5 }],
    ]);
  });

  it('reads a tenant spend again only after the cache time', async () => {
    const spent = { t: 1 };
    const { guard, reads, advance } = setup({ t: 2 }, spent);
    expect(await guard.filtersFor({ tenantId: 't' })).toHaveLength(0);
    spent.t = 3;
    advance(4_999);
    expect(await guard.filtersFor({ tenantId: 't' })).toHaveLength(0);
    advance(1);
    expect(await guard.filtersFor({ tenantId: 't' })).toHaveLength(1);
    expect(reads).toEqual(['t', 't']);
  });
});
