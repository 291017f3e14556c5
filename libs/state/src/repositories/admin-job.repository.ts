import { and, asc, eq, gte, isNull, lt, sql, type SQL } from 'drizzle-orm';
import type { TaskStatus } from '@switchyard/contracts';
import type { Database } from '../database';
import { agentTaskState as t, modelCallLedger as l, type StepCheckpoint } from '../schema';
import { afterJobListCursor, jobListOrder, type JobListCursor } from './job-list';
import { viewColumns, type TaskView } from './task.repository';

/** A task as the operator's job view shows it: the tenant view plus its step checkpoints (names and times, no content). */
export type AdminTaskView = TaskView & { steps: Array<Pick<StepCheckpoint, 'step' | 'name' | 'completed_at'>> };

/** One upstream attempt of a job, from the cost ledger. */
export interface JobAttempt {
  taskId: string | null;
  step: number | null;
  at: Date;
  target: string;
  targetType: string;
  model: string;
  rule: string;
  outcome: string;
  errorClass: string | null;
  latencyMs: number;
  costUsd: number;
  traceId: string | null;
}

export const COST_SERIES_BY = ['target', 'tenant'] as const;
export type CostSeriesBy = (typeof COST_SERIES_BY)[number];

export interface CostSeriesQuery {
  by: CostSeriesBy;
  since: Date;
  until: Date;
  bucketSeconds: number;
}

export interface CostSeriesPoint {
  bucket: Date;
  key: string;
  /** `local` or `cloud` when grouped by target; null by tenant. */
  targetType: string | null;
  calls: number;
  errors: number;
  costUsd: number;
}

/**
 * The operator's reads across tenants (admin token only): the job list with filters, one
 * job's tree with its steps and upstream attempts, and the cost ledger as a time series.
 * Tenant-facing reads stay in TaskRepository, where the tenant id is required.
 */
export class AdminJobRepository {
  constructor(private readonly db: Database) {}

  async listJobs(options: { status?: TaskStatus; type?: string; tenantId?: string; limit: number; cursor?: JobListCursor }): Promise<TaskView[]> {
    const conditions: SQL[] = [isNull(t.parentTaskId)];
    if (options.status) conditions.push(eq(t.status, options.status));
    if (options.type) conditions.push(eq(t.jobType, options.type));
    if (options.tenantId) conditions.push(eq(t.tenantId, options.tenantId));
    if (options.cursor) conditions.push(afterJobListCursor(options.cursor));
    return this.db
      .select(viewColumns)
      .from(t)
      .where(and(...conditions))
      .orderBy(...jobListOrder)
      .limit(options.limit);
  }

  /** Root first, then the tasks in plan order; empty when no job has this id. */
  async findJobTree(jobId: string): Promise<AdminTaskView[]> {
    const rows = await this.db
      .select({ ...viewColumns, steps: sql<AdminTaskView['steps']>`coalesce((select jsonb_agg(jsonb_build_object('step', c->'step', 'name', c->'name', 'completed_at', c->'completed_at')) from jsonb_array_elements(${t.stepCheckpoints}) c), '[]'::jsonb)` })
      .from(t)
      .where(eq(t.jobId, jobId))
      .orderBy(sql`${t.parentTaskId} nulls first`, asc(t.ordinal), asc(t.createdAt));
    return rows;
  }

  async jobAttempts(jobId: string): Promise<JobAttempt[]> {
    return this.db
      .select({
        taskId: l.taskId,
        step: l.step,
        at: l.at,
        target: l.target,
        targetType: l.targetType,
        model: l.model,
        rule: l.rule,
        outcome: l.outcome,
        errorClass: l.errorClass,
        latencyMs: l.latencyMs,
        costUsd: l.costUsd,
        traceId: l.traceId,
      })
      .from(l)
      .where(eq(l.jobId, jobId))
      .orderBy(asc(l.at), asc(l.id));
  }

  /** Calls, errors and cost per time bucket and target (or tenant) in [since, until). */
  async costSeries(query: CostSeriesQuery): Promise<CostSeriesPoint[]> {
    const key = query.by === 'target' ? l.target : l.tenantId;
    const targetType = query.by === 'target' ? sql<string>`min(${l.targetType})` : sql<null>`null`;
    const bucket = sql<Date>`to_timestamp(floor(extract(epoch from ${l.at}) / ${query.bucketSeconds}) * ${query.bucketSeconds})`;
    const rows = await this.db
      .select({
        bucket: bucket.mapWith((value: string | Date) => new Date(value)),
        key,
        targetType,
        calls: sql<number>`count(*)::int`,
        errors: sql<number>`(count(*) filter (where ${l.outcome} in ('error', 'bad_output', 'abandoned')))::int`,
        costUsd: sql<number>`coalesce(sum(${l.costUsd}), 0)::float8`,
      })
      .from(l)
      .where(and(gte(l.at, query.since), lt(l.at, query.until)))
      .groupBy(sql`1`, key)
      .orderBy(sql`1`, key);
    return rows;
  }
}
