import { and, inArray, isNull, sql } from 'drizzle-orm';
import { TASK_STATUSES, type TaskStatus } from '@switchyard/contracts';
import type { Database } from '../database';
import { agentTaskState as t } from '../schema';
import { staleRunningTask } from './task-clauses';

/** Operator-wide job counts, for /metrics. Not tenant data: counts only, across tenants. */
export class JobStatsRepository {
  constructor(private readonly db: Database) {}

  /** Jobs (root tasks) per status; every status is present, 0 where none. */
  async countJobsByStatus(): Promise<Record<TaskStatus, number>> {
    const rows = await this.db
      .select({ status: t.status, n: sql<number>`count(*)::int` })
      .from(t)
      .where(isNull(t.parentTaskId))
      .groupBy(t.status);
    const counts = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
    for (const row of rows) counts[row.status as TaskStatus] = Number(row.n);
    return counts;
  }

  /** Running jobs (root `pending`, `running` or `paused`, as admission counts them) per tenant; tenants with none are absent. */
  async countRunningJobsByTenant(): Promise<Map<string, number>> {
    const rows = await this.db
      .select({ tenantId: t.tenantId, n: sql<number>`count(*)::int` })
      .from(t)
      .where(and(isNull(t.parentTaskId), inArray(t.status, ['pending', 'running', 'paused'])))
      .groupBy(t.tenantId);
    return new Map(rows.map((row) => [row.tenantId, Number(row.n)]));
  }

  /** Running tasks whose heartbeat is older than `staleAfterMs` (the sweeper should be taking them over). */
  async countStaleTasks(staleAfterMs: number): Promise<number> {
    const rows = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(t)
      .where(staleRunningTask(staleAfterMs));
    return Number(rows[0]?.n ?? 0);
  }
}
