import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { jobDegradation } from '../schema';

export interface JobDegradation {
  reason: string;
  detail: Record<string, unknown>;
  since: Date;
}

/** A tenant's spend against its daily budget, and the jobs that were degraded for it. */
export class TenantBudgetRepository {
  constructor(private readonly db: Database) {}

  /** The tenant's ledger cost since the start of the current UTC day (walks the (tenant_id, at) index). */
  async spentTodayUsd(tenantId: string): Promise<number> {
    const result = await this.db.execute<{ spent: number }>(sql`
      select coalesce(sum(cost_usd), 0)::float8 as spent from model_call_ledger
      where tenant_id = ${tenantId} and at >= date_trunc('day', now() at time zone 'utc') at time zone 'utc'`);
    return Number(result.rows[0]?.spent ?? 0);
  }

  /** Records that a job was degraded; the first record of a job stays. */
  async markDegraded(tenantId: string, jobId: string, reason: string, detail: Record<string, unknown>): Promise<void> {
    await this.db.insert(jobDegradation).values({ jobId, tenantId, reason, detail }).onConflictDoNothing();
  }

  async degradationOf(tenantId: string, jobId: string): Promise<JobDegradation | null> {
    const [row] = await this.db
      .select({ reason: jobDegradation.reason, detail: jobDegradation.detail, since: jobDegradation.since })
      .from(jobDegradation)
      .where(and(eq(jobDegradation.tenantId, tenantId), eq(jobDegradation.jobId, jobId)));
    return row ?? null;
  }
}
