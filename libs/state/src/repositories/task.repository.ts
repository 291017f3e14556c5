import { and, asc, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { Pool } from 'pg';
import type { RouteRecord, TaskStatus } from '@switchyard/contracts';
import { poolBehind, type Database } from '../database';
import { agentTaskState as t, type NewTaskRow, type StepCheckpoint, type TaskRow } from '../schema';
import { jsonRowInsert } from './json-row-insert';

/** Who may write a running task: the worker holding this exact lease (fencing token). */
export interface Lease {
  taskId: string;
  owner: string;
  version: number;
}

/** A write was refused because the lease is gone: taken over, cancelled or finished. */
export class LeaseLostError extends Error {
  constructor(readonly lease: Lease, action: string) {
    super(`lease lost on task ${lease.taskId} (owner ${lease.owner}, version ${lease.version}) while trying to ${action}`);
    this.name = 'LeaseLostError';
  }
}

export type ClaimResult =
  | { claimed: true; task: TaskRow; lease: Lease }
  | { claimed: false; reason: 'missing' | 'already_running' | 'finished' | 'blocked'; status?: TaskStatus };

/**
 * Fan-in order, by role: a task of role R may start only once every task of the roles in
 * `deps[R]` in its job has finished (success, or failed/cancelled when optional). Postgres
 * decides this, not the queue: a BullMQ flow parent is only a hint that may come early or never.
 */
export type RoleDependencies = Readonly<Record<string, readonly string[]>>;

/**
 * True when a task of the row `outer` (a table alias or name) still waits for a dependency.
 * An optional dependency that failed or was cancelled no longer holds anything up.
 */
export function unfinishedDependency(deps: RoleDependencies, outer: string) {
  const row = sql.raw(outer);
  return sql`exists (
    select 1 from agent_task_state dep
    where dep.job_id = ${row}.job_id and dep.parent_task_id is not null
      and dep.role in (select jsonb_array_elements_text(coalesce(${JSON.stringify(deps)}::jsonb -> ${row}.role, '[]'::jsonb)))
      and dep.status <> 'success' and not (dep.optional and dep.status in ('failed', 'cancelled')))`;
}

/**
 * Fails a task and rolls the failure up: a required task takes its job down (and the job's
 * other unfinished tasks are cancelled); an optional one fails alone. `where` picks the task
 * (with its fencing condition); it must match at most one row.
 */
export function failTaskStatement(where: ReturnType<typeof sql>, taskId: string, reason: string, routes: RouteRecord[]) {
  return sql`
      with done as (
        update ${t} set status = 'failed', error = ${reason}, route_targets = route_targets || ${json(routes)},
          updated_at = now(), finished_at = now()
        where ${where}
        returning job_id, optional, agent_id
      ), job as (
        update ${t} set status = 'failed', updated_at = now(), finished_at = now(),
          error = 'task ' || (select agent_id from done) || ' failed: ' || ${reason}
        where task_id = (select job_id from done where not optional) and status in ('pending', 'running')
        returning task_id
      ), siblings as (
        update ${t} set status = 'cancelled', updated_at = now(), finished_at = now(),
          error = 'cancelled: another task of the job failed'
        where job_id = (select task_id from job) and task_id <> ${taskId}
          and parent_task_id is not null and status in ('pending', 'running', 'paused')
        returning task_id
      )
      select (select count(*) from done)::int as done, (select count(*) from job)::int as job_failed`;
}

export type CreateJobResult = { created: true; jobId: string } | { created: false; existing: TaskRow };

/** Columns the API shows; the input (documents) and checkpoints stay out of list reads. */
const viewColumns = {
  taskId: t.taskId,
  parentTaskId: t.parentTaskId,
  jobId: t.jobId,
  tenantId: t.tenantId,
  jobType: t.jobType,
  agentId: t.agentId,
  role: t.role,
  status: t.status,
  optional: t.optional,
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

export interface JobListCursor {
  createdAt: Date;
  taskId: string;
}

const ACTIVE: TaskStatus[] = ['queued', 'pending', 'running', 'paused'];
const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

/*
 * The hot path (createJob, claim, checkpoint, complete, heartbeat, fan-in read) is pre-built
 * SQL sent through pg as named statements: parsed and planned once per connection, with no
 * query builder and no row mapping in between. Each starts with a comment naming it (sy:<name>).
 */

/** New rows go in as JSON (see `jsonRowInsert`); these are the database defaults it applies. */
const taskInsert = jsonRowInsert<NewTaskRow>(t, {
  status: "'pending'::task_status",
  optional: 'false',
  ordinal: '0',
  step_checkpoints: "'[]'::jsonb",
  current_step: '0',
  retry_count: '0',
  route_targets: "'[]'::jsonb",
  cost_usd: '0',
  lease_version: '0',
  created_at: 'now()',
  updated_at: 'now()',
});

/**
 * One statement: the root row (skipped when its idempotency key is taken), then the tasks
 * only when the root went in. $1: the root as JSON, $2: the tasks as a JSON array.
 */
const CREATE_JOB_SQL = `/* sy:createJob */
with root as (
  insert into agent_task_state (${taskInsert.columns})
  select ${taskInsert.values} from jsonb_populate_record(null::agent_task_state, $1::jsonb) r
  on conflict (tenant_id, idempotency_key) where parent_task_id is null and idempotency_key is not null do nothing
  returning task_id
), tasks as (
  ${taskInsert.insertFromArray(2)}
  where exists (select 1 from root)
  returning 1
)
select exists (select 1 from root) as created`;

/** $3: the role dependencies as JSON (see `unfinishedDependency`). */
const CLAIM_SQL = `/* sy:claimTask */
with claimed as (
  update agent_task_state set status = 'running', lease_owner = $2, lease_version = lease_version + 1,
    started_at = coalesce(started_at, now()), updated_at = now(), error = null
  where task_id = $1 and status = 'pending' and not exists (
    select 1 from agent_task_state dep
    where dep.job_id = agent_task_state.job_id and dep.parent_task_id is not null
      and dep.role in (select jsonb_array_elements_text(coalesce($3::jsonb -> agent_task_state.role, '[]'::jsonb)))
      and dep.status <> 'success' and not (dep.optional and dep.status in ('failed', 'cancelled')))
  returning *
), job as (
  update agent_task_state set status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
  where task_id = (select job_id from claimed) and status = 'pending'
  returning task_id
)
select * from claimed`;

const TASK_STATUS_SQL = `/* sy:taskStatus */ select status from agent_task_state where task_id = $1`;

/** The lease fence: $1 task, $2 owner, $3 version. */
const FENCE = `task_id = $1 and lease_owner = $2 and lease_version = $3 and status = 'running'`;

const CHECKPOINT_SQL = `/* sy:checkpoint */
update agent_task_state set current_step = $4::int + 1, step_checkpoints = step_checkpoints || $5::jsonb,
  route_targets = route_targets || $6::jsonb, cost_usd = cost_usd + $7::float8, updated_at = now()
where ${FENCE} and current_step = $4::int`;

const COMPLETE_SQL = `/* sy:completeTask */
with done as (
  update agent_task_state set status = 'success', current_step = $4::int + 1,
    step_checkpoints = step_checkpoints || $5::jsonb,
    route_targets = route_targets || $6::jsonb,
    cost_usd = cost_usd + $7::float8, output_summary = $8::jsonb,
    updated_at = now(), finished_at = now(), error = null
  where ${FENCE} and current_step = $4::int
  returning job_id
), job as (
  update agent_task_state set status = 'success', output_summary = $10::jsonb,
    updated_at = now(), finished_at = now()
  where $9::boolean and task_id = (select job_id from done) and status = 'running'
  returning task_id
)
select (select count(*) from done)::int as done`;

const HEARTBEAT_SQL = `/* sy:heartbeat */ update agent_task_state set updated_at = now() where ${FENCE}`;

const TASKS_OF_ROLE_SQL = `/* sy:findTasksOfRole */
select task_id, agent_id, status, input_summary - 'text' as input_summary, output_summary, optional
from agent_task_state where job_id = $1 and role = $2
order by ordinal asc, created_at asc`;

export class TaskRepository {
  private readonly pool: Pool;

  /** `pool` is the one behind `db` (`DatabaseHandle.pool`); when omitted, drizzle's client is used. */
  constructor(
    private readonly db: Database,
    pool?: Pool,
  ) {
    this.pool = poolBehind(db, pool, 'TaskRepository');
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
    // Rare (a repeated submission): read the job that holds the key. A separate statement also
    // sees a job that a concurrent submission committed after this statement's snapshot.
    const [existing] = await this.db
      .select()
      .from(t)
      .where(and(eq(t.tenantId, root.tenantId), eq(t.idempotencyKey, root.idempotencyKey ?? ''), isNull(t.parentTaskId)));
    if (!existing) throw new Error('idempotency conflict without an existing job');
    return { created: false, existing };
  }

  /** Removes a job whose queue entries could not be written, so nothing is half-submitted. */
  async deleteJob(tenantId: string, jobId: string): Promise<void> {
    await this.db.delete(t).where(and(eq(t.tenantId, tenantId), eq(t.taskId, jobId), isNull(t.parentTaskId)));
  }

  async findJobTree(tenantId: string, jobId: string): Promise<TaskView[]> {
    return this.db
      .select(viewColumns)
      .from(t)
      .where(and(eq(t.tenantId, tenantId), eq(t.jobId, jobId)))
      .orderBy(sql`${t.parentTaskId} nulls first`, asc(t.ordinal), asc(t.createdAt));
  }

  async listJobs(
    tenantId: string,
    options: { status?: TaskStatus; limit: number; cursor?: JobListCursor },
  ): Promise<TaskView[]> {
    const conditions = [eq(t.tenantId, tenantId), isNull(t.parentTaskId)];
    if (options.status) conditions.push(eq(t.status, options.status));
    if (options.cursor) {
      const { createdAt, taskId } = options.cursor;
      conditions.push(or(lt(t.createdAt, createdAt), and(eq(t.createdAt, createdAt), lt(t.taskId, taskId)))!);
    }
    return this.db
      .select(viewColumns)
      .from(t)
      .where(and(...conditions))
      .orderBy(sql`${t.createdAt} desc nulls last`, sql`${t.taskId} desc nulls last`)
      .limit(options.limit);
  }

  /** Per-job task counts and cost, for list views. */
  async summarizeJobs(jobIds: string[]): Promise<Map<string, { total: number; completed: number; costUsd: number }>> {
    const summary = new Map<string, { total: number; completed: number; costUsd: number }>();
    if (jobIds.length === 0) return summary;
    const rows = await this.db
      .select({
        jobId: t.jobId,
        total: sql<number>`count(*)::int`,
        completed: sql<number>`(count(*) filter (where ${t.status} = 'success'))::int`,
        costUsd: sql<number>`coalesce(sum(${t.costUsd}), 0)::float8`,
      })
      .from(t)
      .where(and(inArray(t.jobId, jobIds), sql`${t.parentTaskId} is not null`))
      .groupBy(t.jobId);
    for (const row of rows) summary.set(row.jobId, { total: row.total, completed: row.completed, costUsd: row.costUsd });
    return summary;
  }

  /**
   * Takes a pending task for `owner` and marks its job running, in one round trip. The
   * bumped lease version is the fencing token every later write must present.
   */
  async claimTask(taskId: string, owner: string, deps: RoleDependencies = {}): Promise<ClaimResult> {
    const result = await this.pool.query<Record<string, unknown>>({
      name: 'sy-claim-task',
      text: CLAIM_SQL,
      values: [taskId, owner, JSON.stringify(deps)],
    });
    const raw = result.rows[0];
    if (raw) {
      const task = toTaskRow(raw);
      return { claimed: true, task, lease: { taskId, owner, version: task.leaseVersion } };
    }
    const current = (await this.pool.query<{ status: TaskStatus }>({ name: 'sy-task-status', text: TASK_STATUS_SQL, values: [taskId] })).rows[0];
    if (!current) return { claimed: false, reason: 'missing' };
    if (current.status === 'pending') return { claimed: false, reason: 'blocked', status: current.status };
    return {
      claimed: false,
      reason: current.status === 'running' || current.status === 'paused' ? 'already_running' : 'finished',
      status: current.status,
    };
  }

  /** Records a completed step; refused unless the lease still holds and the step is the next one. */
  async checkpoint(lease: Lease, checkpoint: StepCheckpoint, routes: RouteRecord[], costUsd: number): Promise<void> {
    const result = await this.pool.query({
      name: 'sy-checkpoint',
      text: CHECKPOINT_SQL,
      values: [lease.taskId, lease.owner, lease.version, checkpoint.step, JSON.stringify([checkpoint]), JSON.stringify(routes), costUsd],
    });
    if (result.rowCount !== 1) throw new LeaseLostError(lease, `checkpoint step ${checkpoint.step}`);
  }

  /**
   * Records the last step and the task's output. When `jobResult` is given this task
   * finishes its job: the root row takes the result in the same statement.
   */
  async completeTask(
    lease: Lease,
    checkpoint: StepCheckpoint,
    output: Record<string, unknown>,
    routes: RouteRecord[],
    costUsd: number,
    jobResult?: Record<string, unknown>,
  ): Promise<void> {
    const result = await this.pool.query<{ done: number }>({
      name: 'sy-complete-task',
      text: COMPLETE_SQL,
      values: [
        lease.taskId,
        lease.owner,
        lease.version,
        checkpoint.step,
        JSON.stringify([checkpoint]),
        JSON.stringify(routes),
        costUsd,
        JSON.stringify(output),
        jobResult !== undefined,
        JSON.stringify(jobResult ?? null),
      ],
    });
    if (result.rows[0]?.done !== 1) throw new LeaseLostError(lease, 'complete');
  }

  /**
   * A task failed for good. A required task takes its job down with it, and the job's
   * other unfinished tasks are cancelled; an optional one fails alone.
   */
  async failTask(lease: Lease, reason: string, routes: RouteRecord[]): Promise<{ jobFailed: boolean }> {
    const fenced = sql`task_id = ${lease.taskId} and lease_owner = ${lease.owner} and lease_version = ${lease.version} and status = 'running'`;
    const result = await this.db.execute<{ done: number; job_failed: number }>(failTaskStatement(fenced, lease.taskId, reason, routes));
    const row = result.rows[0];
    if (row?.done !== 1) throw new LeaseLostError(lease, 'fail');
    return { jobFailed: row.job_failed === 1 };
  }

  /** Refreshes the running task's heartbeat; false when the lease no longer holds. */
  async heartbeat(lease: Lease): Promise<boolean> {
    const result = await this.pool.query({ name: 'sy-heartbeat', text: HEARTBEAT_SQL, values: [lease.taskId, lease.owner, lease.version] });
    return result.rowCount === 1;
  }

  /**
   * Hands a task back for another attempt; its checkpoints stay. A transient failure counts
   * as a retry; waiting for a model target to come back does not.
   */
  async releaseTask(lease: Lease, reason: string, routes: RouteRecord[], options: { countAsRetry: boolean } = { countAsRetry: true }): Promise<void> {
    const result = await this.db
      .update(t)
      .set({
        status: 'pending',
        leaseOwner: null,
        retryCount: options.countAsRetry ? sql`${t.retryCount} + 1` : t.retryCount,
        error: reason,
        routeTargets: sql`${t.routeTargets} || ${json(routes)}`,
        updatedAt: sql`now()`,
      })
      .where(this.holds(lease));
    if (result.rowCount !== 1) throw new LeaseLostError(lease, 'release');
  }

  /** Cancels a job and every unfinished task of it. Returns null when there is no such job. */
  async cancelJob(tenantId: string, jobId: string): Promise<{ status: TaskStatus; cancelled: boolean } | null> {
    return this.db.transaction(async (tx) => {
      const [root] = await tx
        .select({ status: t.status })
        .from(t)
        .where(and(eq(t.tenantId, tenantId), eq(t.taskId, jobId), isNull(t.parentTaskId)))
        .for('update');
      if (!root) return null;
      if (!ACTIVE.includes(root.status)) return { status: root.status, cancelled: false };
      await tx
        .update(t)
        .set({ status: 'cancelled', error: 'cancelled by request', updatedAt: sql`now()`, finishedAt: sql`now()` })
        .where(and(eq(t.tenantId, tenantId), eq(t.jobId, jobId), inArray(t.status, ACTIVE)));
      return { status: 'cancelled' as const, cancelled: true };
    });
  }

  /** The finished work of a job's tasks in one role: what a fan-in step reads. */
  async findTasksOfRole(jobId: string, role: string): Promise<Pick<TaskRow, 'taskId' | 'agentId' | 'status' | 'inputSummary' | 'outputSummary' | 'optional'>[]> {
    const result = await this.pool.query<{
      task_id: string;
      agent_id: string;
      status: TaskStatus;
      input_summary: Record<string, unknown>;
      output_summary: TaskRow['outputSummary'];
      optional: boolean;
    }>({ name: 'sy-tasks-of-role', text: TASKS_OF_ROLE_SQL, values: [jobId, role] });
    return result.rows.map((r) => ({
      taskId: r.task_id,
      agentId: r.agent_id,
      status: r.status,
      inputSummary: r.input_summary,
      outputSummary: r.output_summary,
      optional: r.optional,
    }));
  }

  async findTask(taskId: string): Promise<TaskRow | undefined> {
    const [row] = await this.db.select().from(t).where(eq(t.taskId, taskId));
    return row;
  }

  private holds(lease: Lease) {
    return and(
      eq(t.taskId, lease.taskId),
      eq(t.leaseOwner, lease.owner),
      eq(t.leaseVersion, lease.version),
      eq(t.status, 'running'),
    );
  }
}

/** Raw rows come back with snake_case names (and, through drizzle's `execute`, string timestamps). */
function toTaskRow(raw: Record<string, unknown>): TaskRow {
  const date = (v: unknown) => (v == null ? null : v instanceof Date ? v : new Date(String(v)));
  return {
    taskId: raw.task_id as string,
    parentTaskId: (raw.parent_task_id as string | null) ?? null,
    jobId: raw.job_id as string,
    tenantId: raw.tenant_id as string,
    jobType: raw.job_type as string,
    agentId: raw.agent_id as string,
    role: raw.role as string,
    status: raw.status as TaskStatus,
    optional: raw.optional as boolean,
    ordinal: Number(raw.ordinal),
    inputSummary: raw.input_summary as Record<string, unknown>,
    outputSummary: (raw.output_summary as TaskRow['outputSummary']) ?? null,
    stepCheckpoints: raw.step_checkpoints as StepCheckpoint[],
    currentStep: Number(raw.current_step),
    totalSteps: Number(raw.total_steps),
    retryCount: Number(raw.retry_count),
    routeTargets: raw.route_targets as RouteRecord[],
    costUsd: Number(raw.cost_usd),
    leaseOwner: (raw.lease_owner as string | null) ?? null,
    leaseVersion: Number(raw.lease_version),
    queueJobId: (raw.queue_job_id as string | null) ?? null,
    error: (raw.error as string | null) ?? null,
    idempotencyKey: (raw.idempotency_key as string | null) ?? null,
    requestHash: (raw.request_hash as string | null) ?? null,
    createdAt: date(raw.created_at)!,
    updatedAt: date(raw.updated_at)!,
    startedAt: date(raw.started_at),
    finishedAt: date(raw.finished_at),
  };
}
