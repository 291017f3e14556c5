import type { Logger } from '@switchyard/observability';
import { dailyBudgetSpentFilter, type CallContext, type CandidateFilter } from '@switchyard/router';
import type { TenantLimits } from '@switchyard/workflows';

export const DAILY_BUDGET_SPENT = 'daily_budget_spent';

export interface TenantBudgetGuardOptions {
  limitsOf: (tenantId: string) => TenantLimits;
  /** The tenant's cost so far in the current UTC day. */
  spentTodayUsd: (tenantId: string) => Promise<number>;
  /** Records that a job's calls ran with cloud targets excluded. */
  markDegraded: (tenantId: string, jobId: string, detail: { daily_budget_usd: number; spent_usd: number }) => Promise<void>;
  logger: Logger;
  /** How long a tenant's spend is reused before it is read again. */
  cacheMs?: number;
  now?: () => number;
}

const NONE: readonly CandidateFilter[] = [];
const CLOUD_EXCLUDED: readonly CandidateFilter[] = [dailyBudgetSpentFilter];
const MAX_REMEMBERED_JOBS = 10_000;

/**
 * The router's per-call filters for a tenant's daily budget (SPEC §6): once the tenant's spend
 * today (UTC, from the cost ledger, cached a few seconds) reaches `daily_budget_usd`, its calls
 * have cloud targets excluded and degrade to local ones; each job degraded so is recorded once.
 * A spend that cannot be read leaves the last known value in force.
 */
export class TenantBudgetGuard {
  private readonly spend = new Map<string, { usd: number; readAt: number }>();
  private readonly reading = new Map<string, Promise<number>>();
  private readonly marked = new Set<string>();
  private readonly cacheMs: number;
  private readonly now: () => number;

  constructor(private readonly options: TenantBudgetGuardOptions) {
    this.cacheMs = options.cacheMs ?? 5_000;
    this.now = options.now ?? Date.now;
  }

  async filtersFor(context: CallContext): Promise<readonly CandidateFilter[]> {
    const tenantId = context.tenantId;
    if (tenantId === undefined) return NONE;
    const budget = this.options.limitsOf(tenantId).daily_budget_usd;
    if (budget === null) return NONE;
    const spent = await this.spentUsd(tenantId);
    if (spent < budget) return NONE;
    if (context.jobId !== undefined && !this.marked.has(context.jobId)) {
      if (this.marked.size >= MAX_REMEMBERED_JOBS) this.marked.clear();
      this.marked.add(context.jobId);
      const jobId = context.jobId;
      this.options.markDegraded(tenantId, jobId, { daily_budget_usd: budget, spent_usd: Math.round(spent * 1e6) / 1e6 }).catch((error: unknown) => {
        this.marked.delete(jobId);
        this.options.logger.warn({ err: error, tenant_id: tenantId, job_id: jobId }, 'could not record the job as degraded');
      });
    }
    return CLOUD_EXCLUDED;
  }

  private async spentUsd(tenantId: string): Promise<number> {
    const cached = this.spend.get(tenantId);
    if (cached && this.now() - cached.readAt < this.cacheMs) return cached.usd;
    let read = this.reading.get(tenantId);
    if (!read) {
      read = this.options.spentTodayUsd(tenantId).finally(() => this.reading.delete(tenantId));
      this.reading.set(tenantId, read);
    }
    try {
      const usd = await read;
      this.spend.set(tenantId, { usd, readAt: this.now() });
      return usd;
    } catch (error) {
      this.options.logger.warn({ err: error, tenant_id: tenantId }, 'could not read the tenant spend; the last known value stays');
      return cached?.usd ?? 0;
    }
  }
}
