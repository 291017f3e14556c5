import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Pool } from 'pg';
import type { TaskStatus } from '@switchyard/contracts';
import { poolBehind, type Database } from '../database';
import { agentTaskState as t, type NewTaskRow, type TaskRow } from '../schema';
import { listJobRoots, summarizeJobTasks, viewColumns, type JobListFilter, type JobSummary, type TaskView } from './job-views';
import { abandonInFlightAttempts, taskInsert } from './task-clauses';

export type CreateJobResult = { created: true; jobId: string } | { created: false; existing: TaskRow };

/** The handle a `db.transaction` callback gets. */
type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];

const ACTIVE: TaskStatus[] = ['queued', 'pending', 'running', 'paused'];
/** A step makes at most this many model calls (a call and its re-ask elsewhere, with room to spare). */
const MAX_CALLS_PER_STEP = 4;

/**
 * One statement: the root row (skipped when its idempotency key is taken), then the tasks
 * only when the root went in. $1: the root as JSON, $2: the tasks as a JSON array. With `admit`,
 * its CTE goes first and every row's status is its `status` expression, not the rows' own.
 */
const createJobSql = (name: string, admit?: { cte: string; status: string }) => {
  const overrides: Record<string, string> = admit ? { status: admit.status } : {};
  return `/* sy:${name} */
with ${admit ? `${admit.cte}, ` : ''}root as (
  insert into agent_task_state (${taskInsert.columns})
  select ${taskInsert.valuesWith(overrides)} from jsonb_populate_record(null::agent_task_state, $1::jsonb) r
  on conflict (tenant_id, idempotency_key) where parent_task_id is null and idempotency_key is not null do nothing
  returning task_id, status
), tasks as (
  ${taskInsert.insertFromArray(2, overrides)}
  where exists (select 1 from root)
  returning 1
)
select exists (select 1 from root) as created, coalesce((select status = 'pending' from root), false) as admitted`;
};

const CREATE_JOB_SQL = createJobSql('createJob');

/**
 * CREATE_JOB_SQL for a submission that may start at once: every row goes in `pending` when
 * `switchyard_may_admit_new_job` (migration 0012: under the admission lock, nothing queued, the
 * tenant's limit $4 and the fleet's $5 not reached for tenant $3) says so, else `queued`.
 */
const CREATE_JOB_ADMITTING_SQL = createJobSql('createJobAdmitting', {
  cte: `admit as (select (case when switchyard_may_admit_new_job($3::text, $4::int, $5::int) then 'pending' else 'queued' end)::task_status as status)`,
  status: '(select status from admit)',
});

export type CreateAdmittingJobResult = { created: true; jobId: string; admitted: boolean } | { created: false; existing: TaskRow };

/**
 * A tenant's jobs, as the API (`/v1/jobs`) reads and changes them: every method takes the
 * tenant, and touches nothing of another tenant. `createJob` takes it on the rows.
 */
export class JobRepository {
  private readonly pool: Pool;

  /** `pool` is the one behind `db` (`DatabaseHandle.pool`); when omitted, drizzle's client is used. */
  constructor(
    private readonly db: Database,
    pool?: Pool,
  ) {
    this.pool = poolBehind(db, pool, 'JobRepository');
  }

  /**
   * Writes a job and all its tasks in one statement. With an idempotency key, a second
   * submission finds the first job instead (the caller compares request hashes).
   */
  async createJob(root: NewTaskRow, tasks: NewTaskRow[]): Promise<CreateJobResult> {
    const result = await this.pool.query<{ created: boolean }>({
      name: 'sy-create-job',
      text: CREATE_JOB_SQL,
      values: [JSON.stringify(taskInsert.toJson(root)), JSON.stringify(tasks.map(taskInsert.toJson))],
    });
    if (result.rows[0]?.created) return { created: true, jobId: root.taskId };
    return { created: false, existing: await this.jobHoldingKey(root) };
  }

  /**
   * Rare (a repeated submission): the job that holds the root's idempotency key. A separate
   * statement also sees a job that a concurrent submission committed after the insert's snapshot.
   */
  private async jobHoldingKey(root: NewTaskRow): Promise<TaskRow> {
    const [existing] = await this.db
      .select()
      .from(t)
      .where(and(eq(t.tenantId, root.tenantId), eq(t.idempotencyKey, root.idempotencyKey ?? ''), isNull(t.parentTaskId)));
    if (!existing) throw new Error('idempotency conflict without an existing job');
    return existing;
  }

  /**
   * `createJob` for a new submission, admitted in the same statement when a pass would admit it
   * now (nothing queued, `limits` not reached; migration 0012 says why that is the pass's
   * decision): then its rows are `pending` (`admitted`), else `queued`, for a pass to admit.
   * Whatever the rows' `status` fields say, the statement decides.
   */
  async createJobAdmitting(root: NewTaskRow, tasks: NewTaskRow[], limits: { tenant: number; global: number }): Promise<CreateAdmittingJobResult> {
    const result = await this.pool.query<{ created: boolean; admitted: boolean }>({
      name: 'sy-create-job-admitting',
      text: CREATE_JOB_ADMITTING_SQL,
      values: [JSON.stringify(taskInsert.toJson(root)), JSON.stringify(tasks.map(taskInsert.toJson)), root.tenantId, limits.tenant, limits.global],
    });
    const row = result.rows[0];
    if (row?.created) return { created: true, jobId: root.taskId, admitted: row.admitted };
    return { created: false, existing: await this.jobHoldingKey(root) };
  }

  /** Removes a job whose queue entries could not be written, so nothing is half-submitted. */
  async deleteJob(tenantId: string, jobId: string): Promise<void> {
    await this.db.delete(t).where(and(eq(t.tenantId, tenantId), eq(t.taskId, jobId), isNull(t.parentTaskId)));
  }

  /** The root first, then the tasks in plan order (a planner's subtasks between it and combine, not grouped by parent). */
  async findJobTree(tenantId: string, jobId: string): Promise<TaskView[]> {
    return this.db
      .select(viewColumns)
      .from(t)
      .where(and(eq(t.tenantId, tenantId), eq(t.jobId, jobId)))
      .orderBy(sql`${t.parentTaskId} is null desc`, asc(t.ordinal), asc(t.createdAt));
  }

  async listJobs(tenantId: string, options: Omit<JobListFilter, 'tenantId' | 'type'>): Promise<TaskView[]> {
    return listJobRoots(this.db, { ...options, tenantId });
  }

  /** Per-job task counts and cost of the tenant's jobs, for list views. */
  async summarizeJobs(tenantId: string, jobIds: readonly string[]): Promise<Map<string, JobSummary>> {
    return summarizeJobTasks(this.db, jobIds, tenantId);
  }

  /** Cancels a job and every unfinished task of it. Returns null when there is no such job. */
  async cancelJob(tenantId: string, jobId: string): Promise<{ status: TaskStatus; cancelled: boolean } | null> {
    return this.db.transaction(async (tx) => {
      const root = await lockedJobRoot(tx, tenantId, jobId);
      if (!root) return null;
      if (!ACTIVE.includes(root.status)) return { status: root.status, cancelled: false };
      await tx
        .update(t)
        .set({ status: 'cancelled', error: 'cancelled by request', updatedAt: sql`now()`, finishedAt: sql`now()` })
        .where(and(eq(t.tenantId, tenantId), eq(t.jobId, jobId), inArray(t.status, ACTIVE)));
      await tx.execute(abandonInFlightAttempts(sql`select task_id from agent_task_state where job_id = ${jobId} and status = 'cancelled'`));
      return { status: 'cancelled' as const, cancelled: true };
    });
  }

  /**
   * Sets a failed or cancelled job going again from where it stopped, in one transaction: its
   * failed and cancelled tasks, and its skipped ones that no finished task built on, go back
   * to `queued` with their step checkpoints (a retry of each: retry_count and the lease version
   * go up, so a worker still holding an old lease is fenced out, and the next run gets a queue
   * job id of its own, `<task>.r<retry_count>` as the sweeper names resumptions; retry_base
   * moves to the new retry_count, so the sweeper's retry limit starts afresh; the answers
   * stored for its unfinished steps are forgotten, so that a reply that failed it is asked
   * again); the root goes back to `queued` for admission. Finished tasks stay as they are: never run, nor paid, again.
   * Returns null when the tenant has no such job.
   */
  async retryJob(tenantId: string, jobId: string): Promise<{ retried: true; tasks: number } | { retried: false; status: TaskStatus } | null> {
    return this.db.transaction(async (tx) => {
      const root = await lockedJobRoot(tx, tenantId, jobId);
      if (!root) return null;
      if (root.status !== 'failed' && root.status !== 'cancelled') return { retried: false as const, status: root.status };
      const tasks = await tx.execute(sql`
        with retried as (
          update agent_task_state r set status = 'queued', lease_owner = null, lease_version = r.lease_version + 1,
            retry_count = r.retry_count + 1, retry_base = r.retry_count + 1, queue_job_id = r.task_id || '.r' || (r.retry_count + 1),
            error = null, finished_at = null, updated_at = now()
          where r.job_id = ${jobId} and r.parent_task_id is not null
            and (r.status in ('failed', 'cancelled')
              or (r.status = 'skipped' and not exists (
                select 1 from agent_task_state d where d.job_id = r.job_id and r.task_id = any(d.depends_on) and d.status = 'success')))
          returning r.task_id, r.current_step, r.total_steps
        ), forgotten as (
          -- The answers stored for the steps it has not finished (keys as modelCallKey makes them,
          -- task:step:call): a reply that failed the task, a bad plan or output, must be asked
          -- again, not reused. Finished steps are checkpointed and never called again.
          delete from model_call_results where idempotency_key in (
            select r.task_id || ':' || step || ':' || call from retried r,
              generate_series(r.current_step, r.total_steps - 1) step, generate_series(1, ${MAX_CALLS_PER_STEP}) call)
        )
        select task_id from retried`);
      await tx
        .update(t)
        .set({ status: 'queued', error: null, outputSummary: null, finishedAt: null, updatedAt: sql`now()` })
        .where(eq(t.taskId, jobId));
      return { retried: true as const, tasks: tasks.rowCount ?? 0 };
    });
  }
}

/** The tenant's job root row, locked for the rest of the transaction: the status every job command decides on. */
async function lockedJobRoot(tx: Transaction, tenantId: string, jobId: string): Promise<{ status: TaskStatus } | undefined> {
  const [root] = await tx
    .select({ status: t.status })
    .from(t)
    .where(and(eq(t.tenantId, tenantId), eq(t.taskId, jobId), isNull(t.parentTaskId)))
    .for('update');
  return root;
}
