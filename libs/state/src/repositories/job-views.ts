import { and, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import type { TaskStatus } from '@switchyard/contracts';
import type { Database } from '../database';
import { agentTaskState as t, type TaskRow } from '../schema';
import { afterJobListCursor, jobListOrder, type JobListCursor } from './job-list';

/*
 * The job list and its summaries, written once for both audiences: a tenant's own jobs
 * (JobRepository, the tenant required) and the operator's view across tenants (AdminJobRepository).
 */

/** Columns the API shows; the input (documents) and checkpoints stay out of list reads. */
export const viewColumns = {
  taskId: t.taskId,
  parentTaskId: t.parentTaskId,
  jobId: t.jobId,
  tenantId: t.tenantId,
  jobType: t.jobType,
  agentId: t.agentId,
  role: t.role,
  status: t.status,
  optional: t.optional,
  dependsOn: t.dependsOn,
  outputSummary: t.outputSummary,
  currentStep: t.currentStep,
  totalSteps: t.totalSteps,
  retryCount: t.retryCount,
  routeTargets: t.routeTargets,
  costUsd: t.costUsd,
  error: t.error,
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
  startedAt: t.startedAt,
  finishedAt: t.finishedAt,
};
export type TaskView = { [K in keyof typeof viewColumns]: TaskRow[K] };

export interface JobListFilter {
  /** Required for a tenant's view (JobRepository); the operator's view may leave it out. */
  tenantId?: string;
  status?: TaskStatus;
  type?: string;
  limit: number;
  cursor?: JobListCursor;
}

/** Job root rows, newest first, keyset-paginated (`jobListOrder`, `afterJobListCursor`). */
export async function listJobRoots(db: Database, filter: JobListFilter): Promise<TaskView[]> {
  const conditions: SQL[] = [isNull(t.parentTaskId)];
  if (filter.tenantId !== undefined) conditions.push(eq(t.tenantId, filter.tenantId));
  if (filter.status) conditions.push(eq(t.status, filter.status));
  if (filter.type) conditions.push(eq(t.jobType, filter.type));
  if (filter.cursor) conditions.push(afterJobListCursor(filter.cursor));
  return db
    .select(viewColumns)
    .from(t)
    .where(and(...conditions))
    .orderBy(...jobListOrder)
    .limit(filter.limit);
}

export interface JobSummary {
  total: number;
  completed: number;
  costUsd: number;
}

/** Per-job task counts and cost, for list views; only jobs of `tenantId` when given. */
export async function summarizeJobTasks(db: Database, jobIds: readonly string[], tenantId?: string): Promise<Map<string, JobSummary>> {
  const summary = new Map<string, JobSummary>();
  if (jobIds.length === 0) return summary;
  const conditions: SQL[] = [inArray(t.jobId, [...jobIds]), sql`${t.parentTaskId} is not null`];
  if (tenantId !== undefined) conditions.push(eq(t.tenantId, tenantId));
  const rows = await db
    .select({
      jobId: t.jobId,
      total: sql<number>`count(*)::int`,
      completed: sql<number>`(count(*) filter (where ${t.status} = 'success'))::int`,
      costUsd: sql<number>`coalesce(sum(${t.costUsd}), 0)::float8`,
    })
    .from(t)
    .where(and(...conditions))
    .groupBy(t.jobId);
  for (const row of rows) summary.set(row.jobId, { total: row.total, completed: row.completed, costUsd: row.costUsd });
  return summary;
}
