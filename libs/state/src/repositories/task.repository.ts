import { and, asc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import type { Pool } from 'pg';
import type { RouteRecord, TaskStatus, TraceCarrier } from '@switchyard/contracts';
import { poolBehind, type Database } from '../database';
import { agentTaskState as t, type NewTaskRow, type StepCheckpoint, type TaskRow } from '../schema';
import { jsonRowInsert } from './json-row-insert';
import { afterJobListCursor, jobListOrder, type JobListCursor } from './job-list';

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

/** What every task of a job runs with, read from the job's root row. */
export interface JobContext {
  meta: unknown;
  workflowHash: string | null;
  jobType: string;
  /** The job's task count (the root's total_steps), which sizes its retry budget. */
  taskCount: number;
}

export type ClaimResult =
  | { claimed: true; task: TaskRow; lease: Lease; job?: JobContext }
  | { claimed: false; reason: 'missing' | 'already_running' | 'finished' | 'blocked'; status?: TaskStatus };

/**
 * The fan-in clause, its one home: the row `outer` (a table alias or name) may start when every
 * task in its `depends_on` is `success`, or optional and given up (`skipped`, `failed`,
 * `cancelled`). Postgres decides this, not the queue: an enqueue may come early (a duplicate)
 * or never (a crash between commit and enqueue; the sweeper's reconcile makes up for it).
 */
export function dependenciesDoneSql(outer: string): string {
  return `not exists (
    select 1 from agent_task_state dep
    where dep.task_id = any(${outer}.depends_on)
      and dep.status <> 'success' and not (dep.optional and dep.status in ('skipped', 'failed', 'cancelled')))`;
}

/** `dependenciesDoneSql` as a drizzle fragment. */
export function dependenciesDone(outer: string) {
  return sql.raw(dependenciesDoneSql(outer));
}

/** A pending task whose dependencies just finished: the finishing worker enqueues it after its commit. */
export interface ReadyTask {
  taskId: string;
  jobId: string;
  tenantId: string;
  role: string;
  traceContext: TraceCarrier | null;
  /** The queue job id its next run must use when not the task id (a retried or resumed task: its earlier queue job still exists). */
  queueJobId?: string | null;
}

/** A finished (or given-up) task as the job result sees it. */
export interface TaskOutcomeRow {
  taskId: string;
  role: string;
  status: TaskStatus;
  output: unknown;
  /** The for_each item key kept in the task's input (`item_key`). */
  key?: string;
}

/** What finishing a task changed beyond itself. */
export interface FinishResult {
  /** Tasks of the job that became claimable with this one finished. */
  ready: ReadyTask[];
  /** This task was the last unfinished one: the job is `success` with its result. */
  jobCompleted: boolean;
}

/** How a task ends without failing its job: done with an output, or skipped (optional) with a reason. */
export type TaskFinish =
  | {
      status: 'success';
      checkpoint: StepCheckpoint;
      output: unknown;
      routes: RouteRecord[];
      costUsd: number;
      /**
       * A planner's subtasks (their `depends_on` include the planner): written with its
       * completion, in the same transaction, and the tasks that waited for the planner then
       * wait for them too. A plan is never half there.
       */
      subtasks?: NewTaskRow[];
    }
  | { status: 'skipped'; reason: string; routes: RouteRecord[] };

/**
 * The ledger rows of upstream attempts still `in_flight` for these tasks (a SQL expression of
 * task ids: a subquery or a literal), marked `abandoned`: the task ended (failed, cancelled,
 * given up) and will not run the call again to settle them. A call that does finish after all
 * replaces its row with the real outcome.
 */
export function abandonInFlightAttempts(taskIds: SQL) {
  return sql`update model_call_ledger set outcome = 'abandoned' where outcome = 'in_flight' and task_id in (${taskIds})`;
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
        returning task_id, job_id, optional, agent_id
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
      ), abandoned as (
        ${abandonInFlightAttempts(sql.raw('select task_id from done union all select task_id from siblings'))}
      )
      select (select count(*) from done)::int as done, (select count(*) from job)::int as job_failed`;
}

export type CreateJobResult = { created: true; jobId: string } | { created: false; existing: TaskRow };

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

const ACTIVE: TaskStatus[] = ['queued', 'pending', 'running', 'paused'];
/** A step makes at most this many model calls (a call and its re-ask elsewhere, with room to spare). */
const MAX_CALLS_PER_STEP = 4;
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
  depends_on: "'{}'::uuid[]",
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

const CLAIM_SQL = `/* sy:claimTask */
with claimed as (
  update agent_task_state set status = 'running', lease_owner = $2, lease_version = lease_version + 1,
    started_at = coalesce(started_at, now()), updated_at = now(), error = null
  where task_id = $1 and status = 'pending' and ${dependenciesDoneSql('agent_task_state')}
  returning *
), job as (
  update agent_task_state set status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
  where task_id = (select job_id from claimed) and status = 'pending'
  returning task_id
)
select c.*, r.input_summary -> 'meta' as job_meta, r.workflow_hash as job_workflow_hash, r.job_type as job_job_type, r.total_steps as job_task_count
from claimed c left join agent_task_state r on r.task_id = c.job_id and r.parent_task_id is null`;

const TASK_STATUS_SQL = `/* sy:taskStatus */ select status from agent_task_state where task_id = $1`;

/**
 * The lease fence, its one home: a write to a task must present its exact lease (owner and
 * version) while it runs. As text with $1 task, $2 owner, $3 version for the pre-built
 * statements, and as a drizzle condition (`leaseFence`) built from the same text.
 */
const FENCE = `task_id = $1 and lease_owner = $2 and lease_version = $3 and status = 'running'`;

/** `FENCE` with this lease's values as parameters. */
export function leaseFence(lease: Lease): SQL {
  const values = [lease.taskId, lease.owner, lease.version];
  return sql.join(
    FENCE.split(/\$(\d)/).map((part, i) => (i % 2 === 1 ? sql`${values[Number(part) - 1]}` : sql.raw(part))),
    sql.raw(''),
  );
}

const CHECKPOINT_SQL = `/* sy:checkpoint */
update agent_task_state set current_step = $4::int + 1, step_checkpoints = step_checkpoints || $5::jsonb,
  route_targets = route_targets || $6::jsonb, cost_usd = cost_usd + $7::float8, updated_at = now()
where ${FENCE} and current_step = $4::int`;

const COMPLETE_SQL = `/* sy:completeTask */
update agent_task_state set status = 'success', current_step = $4::int + 1,
  step_checkpoints = step_checkpoints || $5::jsonb,
  route_targets = route_targets || $6::jsonb,
  cost_usd = cost_usd + $7::float8, output_summary = $8::jsonb,
  updated_at = now(), finished_at = now(), error = null
where ${FENCE} and current_step = $4::int
returning job_id`;

const SKIP_SQL = `/* sy:skipTask */
update agent_task_state set status = 'skipped', error = $4, route_targets = route_targets || $5::jsonb,
  updated_at = now(), finished_at = now()
where ${FENCE} and optional
returning job_id`;

/*
 * Finishing serialises on the job's root row: each finisher locks it after its own update, so
 * the next one's reads (a new snapshot per statement) see every earlier finish. Without it two
 * tasks finishing at once could each see the other unfinished: the job would never complete
 * and their dependents never be enqueued.
 */
const LOCK_JOB_SQL = `/* sy:lockJob */ select status from agent_task_state where task_id = $1 for update`;

/**
 * After a finish, in one round trip: the dependents of $2 that became ready (rows with a
 * task_id), and the count of the job's unfinished tasks — anything but success and an
 * optional task given up (the row without one).
 */
const READY_AND_UNFINISHED_SQL = `/* sy:readyDependents */
select task_id, job_id, tenant_id, role, trace_context, queue_job_id, ordinal, null::int as unfinished from agent_task_state d
where d.job_id = $1 and d.status = 'pending' and $2::uuid = any(d.depends_on) and ${dependenciesDoneSql('d')}
union all
select null, null, null, null, null, null, null, count(*)::int from agent_task_state
where job_id = $1 and parent_task_id is not null
  and status <> 'success' and not (optional and status in ('skipped', 'failed', 'cancelled'))
order by unfinished nulls first, ordinal`;

const JOB_OUTCOMES_SQL = `/* sy:jobOutcomes */
select task_id, role, status, output_summary, input_summary ->> 'item_key' as item_key
from agent_task_state where job_id = $1 and parent_task_id is not null
order by ordinal, created_at`;

const COMPLETE_JOB_SQL = `/* sy:completeJob */
update agent_task_state set status = 'success', output_summary = $2::jsonb, updated_at = now(), finished_at = now()
where task_id = $1 and status = 'running'`;

/** A planner's subtasks: $1 the rows as a JSON array. */
const INSERT_SUBTASKS_SQL = `/* sy:insertSubtasks */
${taskInsert.insertFromArray(1)}`;

/**
 * After a planner's subtasks went in ($1 job, $2 planner, $3 subtask ids): the job's other
 * tasks that waited for the planner (the combining agent) wait for every subtask too and
 * list after them (the subtasks take the ordinals after the planner's), and the root counts them.
 */
const EXTEND_DEPENDENTS_SQL = `/* sy:extendPlanDependents */
update agent_task_state set
  depends_on = case when task_id = $1 then depends_on else depends_on || $3::uuid[] end,
  total_steps = case when task_id = $1 then total_steps + cardinality($3::uuid[]) else total_steps end,
  ordinal = case when task_id = $1 then ordinal else ordinal + cardinality($3::uuid[]) end,
  updated_at = now()
where job_id = $1
  and (task_id = $1 or ($2::uuid = any(depends_on) and parent_task_id is distinct from $2::uuid))`;

const HEARTBEAT_SQL = `/* sy:heartbeat */ update agent_task_state set updated_at = now() where ${FENCE}`;

const TASKS_OF_ROLES_SQL = `/* sy:tasksOfRoles */
select task_id, role, status, output_summary, input_summary ->> 'item_key' as item_key
from agent_task_state where job_id = $1 and role = any($2::text[]) and parent_task_id is not null
order by ordinal asc, created_at asc`;

const JOB_CONTEXT_SQL = `/* sy:jobContext */
select input_summary -> 'meta' as meta, workflow_hash, job_type from agent_task_state where task_id = $1 and parent_task_id is null`;

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

  /** The root first, then the tasks in plan order (a planner's subtasks between it and combine, not grouped by parent). */
  async findJobTree(tenantId: string, jobId: string): Promise<TaskView[]> {
    return this.db
      .select(viewColumns)
      .from(t)
      .where(and(eq(t.tenantId, tenantId), eq(t.jobId, jobId)))
      .orderBy(sql`${t.parentTaskId} is null desc`, asc(t.ordinal), asc(t.createdAt));
  }

  async listJobs(
    tenantId: string,
    options: { status?: TaskStatus; limit: number; cursor?: JobListCursor },
  ): Promise<TaskView[]> {
    const conditions = [eq(t.tenantId, tenantId), isNull(t.parentTaskId)];
    if (options.status) conditions.push(eq(t.status, options.status));
    if (options.cursor) conditions.push(afterJobListCursor(options.cursor));
    return this.db
      .select(viewColumns)
      .from(t)
      .where(and(...conditions))
      .orderBy(...jobListOrder)
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
  async claimTask(taskId: string, owner: string): Promise<ClaimResult> {
    const result = await this.pool.query<Record<string, unknown>>({
      name: 'sy-claim-task',
      text: CLAIM_SQL,
      values: [taskId, owner],
    });
    const raw = result.rows[0];
    if (raw) {
      const task = toTaskRow(raw);
      // The job's context comes with the claim: a task run needs it at once, and one round trip is cheaper than two.
      const job: JobContext | undefined =
        raw.job_job_type == null
          ? undefined
          : { meta: raw.job_meta, workflowHash: (raw.job_workflow_hash as string | null) ?? null, jobType: raw.job_job_type as string, taskCount: Number(raw.job_task_count) };
      return { claimed: true, task, lease: { taskId, owner, version: task.leaseVersion }, ...(job ? { job } : {}) };
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
   * Records the last step and the task's output. Returns the dependents that became ready,
   * and, when this was the job's last unfinished task, completes the job with
   * `resultOf(every task's outcome)` in the same transaction. A planner passes its
   * `subtasks`: they are written in that transaction too (see `TaskFinish`).
   */
  async completeTask(
    lease: Lease,
    checkpoint: StepCheckpoint,
    output: unknown,
    routes: RouteRecord[],
    costUsd: number,
    resultOf: (outcomes: TaskOutcomeRow[]) => unknown = () => null,
    subtasks: NewTaskRow[] = [],
  ): Promise<FinishResult> {
    return this.finish(lease, { status: 'success', checkpoint, output, routes, costUsd, subtasks }, resultOf);
  }

  /** An optional task given up (degradation): `skipped` with the reason; its dependents go on without it. */
  async skipTask(lease: Lease, reason: string, routes: RouteRecord[], resultOf: (outcomes: TaskOutcomeRow[]) => unknown = () => null): Promise<FinishResult> {
    return this.finish(lease, { status: 'skipped', reason, routes }, resultOf);
  }

  private async finish(lease: Lease, finish: TaskFinish, resultOf: (outcomes: TaskOutcomeRow[]) => unknown): Promise<FinishResult> {
    const client = await this.pool.connect();
    try {
      await client.query('begin');
      const fence = [lease.taskId, lease.owner, lease.version];
      const done =
        finish.status === 'success'
          ? await client.query<{ job_id: string }>({
              name: 'sy-complete-task',
              text: COMPLETE_SQL,
              values: [...fence, finish.checkpoint.step, JSON.stringify([finish.checkpoint]), JSON.stringify(finish.routes), finish.costUsd, JSON.stringify(finish.output ?? null)],
            })
          : await client.query<{ job_id: string }>({ name: 'sy-skip-task', text: SKIP_SQL, values: [...fence, finish.reason, JSON.stringify(finish.routes)] });
      const jobId = done.rows[0]?.job_id;
      if (!jobId) {
        await client.query('rollback');
        throw new LeaseLostError(lease, finish.status === 'success' ? 'complete' : 'skip');
      }
      await client.query({ name: 'sy-lock-job', text: LOCK_JOB_SQL, values: [jobId] });
      if (finish.status === 'success' && finish.subtasks?.length) {
        await client.query({ name: 'sy-insert-subtasks', text: INSERT_SUBTASKS_SQL, values: [JSON.stringify(finish.subtasks.map(taskInsert.toJson))] });
        await client.query({ name: 'sy-extend-plan-dependents', text: EXTEND_DEPENDENTS_SQL, values: [jobId, lease.taskId, finish.subtasks.map((task) => task.taskId)] });
      }
      const after = await client.query<{
        task_id: string | null;
        job_id: string;
        tenant_id: string;
        role: string;
        trace_context: TraceCarrier | null;
        queue_job_id: string | null;
        unfinished: number | null;
      }>({ name: 'sy-ready-and-unfinished', text: READY_AND_UNFINISHED_SQL, values: [jobId, lease.taskId] });
      const ready = after.rows.filter((r) => r.task_id !== null);
      const unfinished = after.rows.find((r) => r.task_id === null)?.unfinished ?? 0;
      let jobCompleted = false;
      if (unfinished === 0) {
        const outcomes = await client.query<{ task_id: string; role: string; status: TaskStatus; output_summary: unknown; item_key: string | null }>({
          name: 'sy-job-outcomes',
          text: JOB_OUTCOMES_SQL,
          values: [jobId],
        });
        const result = resultOf(outcomes.rows.map(toOutcome));
        const completed = await client.query({ name: 'sy-complete-job', text: COMPLETE_JOB_SQL, values: [jobId, JSON.stringify(result ?? null)] });
        jobCompleted = completed.rowCount === 1;
      }
      await client.query('commit');
      return {
        ready: ready.map((r) => ({ taskId: r.task_id!, jobId: r.job_id, tenantId: r.tenant_id, role: r.role, traceContext: r.trace_context, ...(r.queue_job_id ? { queueJobId: r.queue_job_id } : {}) })),
        jobCompleted,
      };
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * A task failed for good. A required task takes its job down with it, and the job's
   * other unfinished tasks are cancelled; an optional one fails alone.
   */
  async failTask(lease: Lease, reason: string, routes: RouteRecord[]): Promise<{ jobFailed: boolean }> {
    const result = await this.db.execute<{ done: number; job_failed: number }>(failTaskStatement(leaseFence(lease), lease.taskId, reason, routes));
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
      .where(leaseFence(lease));
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
      await tx.execute(abandonInFlightAttempts(sql`select task_id from agent_task_state where job_id = ${jobId} and status = 'cancelled'`));
      return { status: 'cancelled' as const, cancelled: true };
    });
  }

  /**
   * Sets a failed or cancelled job going again from where it stopped, in one transaction: its
   * failed and cancelled tasks, and its skipped ones that no finished task built on, go back
   * to `queued` with their step checkpoints (a retry of each: retry_count and the lease version
   * go up, so a worker still holding an old lease is fenced out, and the next run gets a queue
   * job id of its own, `<task>.r<retry_count>` as the sweeper names resumptions; the answers
   * stored for its unfinished steps are forgotten, so that a reply that failed it is asked
   * again); the root goes back to `queued` for admission. Finished tasks stay as they are: never run, nor paid, again.
   * Returns null when the tenant has no such job.
   */
  async retryJob(tenantId: string, jobId: string): Promise<{ retried: true; tasks: number } | { retried: false; status: TaskStatus } | null> {
    return this.db.transaction(async (tx) => {
      const [root] = await tx
        .select({ status: t.status })
        .from(t)
        .where(and(eq(t.tenantId, tenantId), eq(t.taskId, jobId), isNull(t.parentTaskId)))
        .for('update');
      if (!root) return null;
      if (root.status !== 'failed' && root.status !== 'cancelled') return { retried: false as const, status: root.status };
      const tasks = await tx.execute(sql`
        with retried as (
          update agent_task_state r set status = 'queued', lease_owner = null, lease_version = r.lease_version + 1,
            retry_count = r.retry_count + 1, queue_job_id = r.task_id || '.r' || (r.retry_count + 1),
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

  /** The tasks of a job in these roles, with their outcomes: what a gather step reads (fan-in). */
  async findTaskOutcomes(jobId: string, roles: readonly string[]): Promise<TaskOutcomeRow[]> {
    if (roles.length === 0) return [];
    const result = await this.pool.query<{ task_id: string; role: string; status: TaskStatus; output_summary: unknown; item_key: string | null }>({
      name: 'sy-tasks-of-roles',
      text: TASKS_OF_ROLES_SQL,
      values: [jobId, roles],
    });
    return result.rows.map(toOutcome);
  }

  /** What every task of a job runs with: the job's meta, type and workflow version. */
  async findJobContext(jobId: string): Promise<{ meta: unknown; workflowHash: string | null; jobType: string } | undefined> {
    const result = await this.pool.query<{ meta: unknown; workflow_hash: string | null; job_type: string }>({ name: 'sy-job-context', text: JOB_CONTEXT_SQL, values: [jobId] });
    const row = result.rows[0];
    return row ? { meta: row.meta, workflowHash: row.workflow_hash, jobType: row.job_type } : undefined;
  }

  /** The workflow definition a job was planned with (read once per version: workers cache it by hash). */
  async findWorkflowDefinition(jobId: string): Promise<Record<string, unknown> | null> {
    const [row] = await this.db
      .select({ definition: t.workflowDefinition })
      .from(t)
      .where(and(eq(t.taskId, jobId), isNull(t.parentTaskId)));
    return row?.definition ?? null;
  }

  /**
   * The job's input, without the arrays at `omit` (paths into the input): a for_each task
   * carries its own item, and need not read every other item of a large input again.
   */
  async findJobInput(jobId: string, omit: readonly (readonly string[])[] = []): Promise<unknown> {
    let input = sql`(${t.inputSummary} -> 'input')`;
    for (const path of omit) input = sql`(${input} #- ${`{${path.map((p) => `"${p.replace(/["\\]/g, '')}"`).join(',')}}`}::text[])`;
    const [row] = await this.db
      .select({ input: sql<unknown>`${input}` })
      .from(t)
      .where(and(eq(t.taskId, jobId), isNull(t.parentTaskId)));
    return row?.input;
  }

  async findTask(taskId: string): Promise<TaskRow | undefined> {
    const [row] = await this.db.select().from(t).where(eq(t.taskId, taskId));
    return row;
  }
}

function toOutcome(row: { task_id: string; role: string; status: TaskStatus; output_summary: unknown; item_key: string | null }): TaskOutcomeRow {
  return { taskId: row.task_id, role: row.role, status: row.status, output: row.output_summary, ...(row.item_key === null ? {} : { key: row.item_key }) };
}

/** Raw rows come back with snake_case names (and, through drizzle's `execute`, string timestamps). */
function toTaskRow(raw: Record<string, unknown>): TaskRow {
  const date = (v: unknown) => (v == null ? null : v instanceof Date ? v : new Date(String(v)));
  return {
    taskId: raw.task_id as string,
    parentTaskId: (raw.parent_task_id as string | null) ?? null,
    dependsOn: (raw.depends_on as string[] | null) ?? [],
    traceContext: (raw.trace_context as TraceCarrier | null) ?? null,
    workflowDefinition: (raw.workflow_definition as Record<string, unknown> | null) ?? null,
    workflowHash: (raw.workflow_hash as string | null) ?? null,
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
