import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Pool } from 'pg';
import type { RouteRecord, TaskStatus, TraceCarrier } from '@switchyard/contracts';
import { poolBehind, type Database } from '../database';
import { GroupCommit } from './group-commit';
import { agentTaskState as t, type NewTaskRow, type StepCheckpoint, type TaskRow } from '../schema';
import {
  FENCE,
  LeaseLostError,
  dependenciesDoneSql,
  failTaskStatement,
  json,
  leaseFence,
  toReadyTask,
  taskInsert,
  toOutcome,
  type Lease,
  type RawOutcome,
  type RawReadyTask,
  type ReadyTask,
  type TaskOutcomeRow,
} from './task-clauses';

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
 * The claim of the tasks that `which` picks (each pending, its dependencies done), with each one's job context.
 * The status is compared as text so that the rows are found by id (`which`) whatever the
 * statistics say: the partial index of pending rows matches `status = 'pending'`, and the planner
 * took it whenever its statistics said few rows were pending, then walked every entry of it —
 * thousands of dead ones in a table vacuumed late (auto_explain in bench 1, session 6; the same for
 * the checkpoints' batch and the admission flip).
 */
const claimSql = (name: string, which: string) => `/* sy:${name} */
with claimed as (
  update agent_task_state set status = 'running', lease_owner = $2, lease_version = lease_version + 1,
    started_at = coalesce(started_at, now()), updated_at = now(), error = null
  where ${which} and status::text = 'pending' and ${dependenciesDoneSql('agent_task_state')}
  returning *
), job as (
  update agent_task_state set status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
  where task_id in (select job_id from claimed) and status::text = 'pending'
  returning task_id
)
select c.*, r.input_summary -> 'meta' as job_meta, r.workflow_hash as job_workflow_hash, r.job_type as job_job_type, r.total_steps as job_task_count
from claimed c left join agent_task_state r on r.task_id = c.job_id and r.parent_task_id is null`;

const CLAIM_SQL = claimSql('claimTask', 'task_id = $1');

/** Several claims of one owner in one statement (group commit): $1 the task ids. */
const CLAIM_MANY_SQL = claimSql('claimTasks', 'task_id = any($1::uuid[])');

const TASK_STATUSES_SQL = `/* sy:taskStatuses */ select task_id, status from agent_task_state where task_id = any($1::uuid[])`;

const TASK_STATUS_SQL = `/* sy:taskStatus */ select status from agent_task_state where task_id = $1`;

const CHECKPOINT_WRITE = `update agent_task_state set current_step = $4::int + 1, step_checkpoints = step_checkpoints || $5::jsonb,
  route_targets = route_targets || $6::jsonb, cost_usd = cost_usd + $7::float8
where ${FENCE} and current_step = $4::int`;

const CHECKPOINT_SQL = `/* sy:checkpoint */
${CHECKPOINT_WRITE}`;

/**
 * The job's input (on the root row `r`) without the arrays at the `count` paths given as
 * parameters from `$first` on: a for_each task has its own item on its row, and need not read
 * every other item of a large input again.
 */
function jobInputWithout(first: number, count: number): string {
  let input = `(r.input_summary -> 'input')`;
  for (let i = 0; i < count; i += 1) input = `(${input} #- $${first + i}::text[])`;
  return input;
}

/** A checkpoint that also reads the job's input ($8… the paths left out): what a task's first call step needs, in the same round trip. */
const checkpointReadingInputSql = (omitted: number) => `/* sy:checkpointReadingInput */
${CHECKPOINT_WRITE}
returning (select ${jobInputWithout(8, omitted)} from agent_task_state r where r.task_id = agent_task_state.job_id and r.parent_task_id is null) as job_input`;

/**
 * Several `checkpointReadingInputSql` in one statement (group commit): $1 a JSON array of
 * {task_id, owner, version, step, checkpoint, omit}, $2 their task ids. The rows are found by
 * primary key through $2 whatever the statistics say (the status compared as text, as in
 * `claimSql`): joined only to the JSON rows, the planner walked every entry of the running-task
 * index instead. Each row is written only under its own lease fence (the columns of FENCE, per
 * item) and at its expected step; the rows that come back are the ones written, each with its
 * job's input without its own `omit` paths.
 */
const CHECKPOINTS_READING_INPUT_SQL = `/* sy:checkpointsReadingInput */
with i as (
  select * from jsonb_to_recordset($1::jsonb) as i(task_id uuid, owner text, version int, step int, checkpoint jsonb, omit jsonb)
), written as (
  update agent_task_state t set current_step = i.step + 1, step_checkpoints = t.step_checkpoints || jsonb_build_array(i.checkpoint)
  from i
  where t.task_id = any($2::uuid[]) and t.task_id = i.task_id and t.lease_owner = i.owner and t.lease_version = i.version and t.status::text = 'running' and t.current_step = i.step
  returning t.task_id, t.job_id, i.omit
)
select w.task_id, switchyard_jsonb_without(r.input_summary -> 'input', w.omit) as job_input
from written w left join agent_task_state r on r.task_id = w.job_id and r.parent_task_id is null`;

const jobInputSql = (omitted: number) => `/* sy:jobInput */
select ${jobInputWithout(2, omitted)} as job_input from agent_task_state r where r.task_id = $1 and r.parent_task_id is null`;

/*
 * The full finishing transaction, now only a planner's (its subtasks go in with its completion;
 * every other finish is `switchyard_finish_task`, which takes the same locks in the same order).
 * Finishing serialises on the job's finish lock (a transaction-scoped advisory lock keyed by the
 * job, held to commit; cheaper than a row lock of the root, which writes the heap and the WAL):
 * each finishing statement takes it with its own update, so the next finisher's read (a new
 * snapshot, taken once it holds the lock) sees every earlier finish. Without it two tasks finishing at once could
 * each see the other unfinished: the job would never complete and their dependents never be
 * enqueued. The lock rides in the finishing statement, not a round trip of its own.
 */
const LOCK_JOB_OF_DONE = `locked as (select pg_advisory_xact_lock(hashtext('switchyard:job'), hashtext(job_id::text)) from done)
select job_id from done, (select count(*) from locked) as lock_taken`;

const COMPLETE_SQL = `/* sy:completeTask */
with done as (
  update agent_task_state set status = 'success', current_step = $4::int + 1,
    step_checkpoints = step_checkpoints || $5::jsonb,
    route_targets = route_targets || $6::jsonb,
    cost_usd = cost_usd + $7::float8, output_summary = $8::jsonb,
    updated_at = now(), finished_at = now(), error = null
  where ${FENCE} and current_step = $4::int
  returning job_id
), ${LOCK_JOB_OF_DONE}`;

/**
 * After a finish, in one round trip (with the job's finish lock held): the dependents of $2 that
 * became ready, the count of the job's unfinished tasks (anything but success and an optional
 * task given up) and, only when none is left, every task's outcome for the job's result.
 */
const AFTER_FINISH_SQL = `/* sy:afterFinish */
with unfinished as (
  select count(*)::int as n from agent_task_state
  where job_id = $1 and parent_task_id is not null
    and status <> 'success' and not (optional and status in ('skipped', 'failed', 'cancelled'))
)
select
  (select coalesce(jsonb_agg(jsonb_build_object('task_id', d.task_id, 'job_id', d.job_id, 'tenant_id', d.tenant_id, 'role', d.role,
      'trace_context', d.trace_context, 'queue_job_id', d.queue_job_id) order by d.ordinal), '[]'::jsonb)
   from agent_task_state d
   where d.job_id = $1 and d.status::text = 'pending' and $2::uuid = any(d.depends_on) and ${dependenciesDoneSql('d')}) as ready,
  case when u.n = 0 then (
    select jsonb_agg(jsonb_build_object('task_id', o.task_id, 'role', o.role, 'status', o.status, 'output_summary', o.output_summary,
      'item_key', o.input_summary ->> 'item_key') order by o.ordinal, o.created_at)
    from agent_task_state o where o.job_id = $1 and o.parent_task_id is not null) end as outcomes
from unfinished u`;

/**
 * A finish in one round trip (migration 0009, `switchyard_finish_task`): the fenced update, the
 * job root locked, the ready dependents read. When the task is its job's last unfinished one it
 * declines ('last', nothing written) with every task's outcome; called again with the job's
 * result ($11 true, $12), it writes the task and completes the job. Why two finishers at once
 * never miss each other is written beside the function.
 */
const FINISH_FUNCTION_SQL = `/* sy:finishTask */
select outcome, ready, outcomes from switchyard_finish_task($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::float8, $9::jsonb, $10, $11, $12::jsonb)`;

/** `FINISH_FUNCTION_SQL` of the last task, with the job's result: a statement of its own in the statement counts. */
const FINISH_LAST_SQL = `/* sy:finishLastTask */
select outcome, ready, outcomes from switchyard_finish_task($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::float8, $9::jsonb, $10, $11, $12::jsonb)`;

/**
 * Several `FINISH_FUNCTION_SQL` in one statement (group commit): $1 a JSON array of the
 * function's arguments, called in the array's order (sorted by job, so that two batches lock
 * job roots in one order). One transaction: the batch's locks are held to its commit; each call's
 * statements still see everything committed before they ran and the calls before them.
 */
const FINISH_MANY_SQL = `/* sy:finishTasks */
select f.outcome, f.ready, f.outcomes
from jsonb_to_recordset($1::jsonb) as i(n int, task_id uuid, owner text, version int, skip boolean, step int,
        checkpoints jsonb, routes jsonb, cost float8, output jsonb, reason text)
cross join lateral switchyard_finish_task(i.task_id, i.owner, i.version, i.skip, i.step, i.checkpoints, i.routes, i.cost, i.output, i.reason, false, null) f
order by i.n`;

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

/**
 * The heartbeat (SPEC §2: `updated_at`) of every lease of a worker in one statement: $1 a JSON
 * array of {task_id, owner, version}, $2 their task ids (rows found by primary key, the status
 * compared as text, as in `claimSql`). Each row is written only under its own lease; the ids
 * that come back are the leases still held.
 */
const HEARTBEATS_SQL = `/* sy:heartbeats */
update agent_task_state t set updated_at = now()
from jsonb_to_recordset($1::jsonb) as i(task_id uuid, owner text, version int)
where t.task_id = any($2::uuid[]) and t.task_id = i.task_id and t.lease_owner = i.owner and t.lease_version = i.version and t.status::text = 'running'
returning t.task_id`;

const TASKS_OF_ROLES_SQL = `/* sy:tasksOfRoles */
select task_id, role, status, output_summary, input_summary ->> 'item_key' as item_key
from agent_task_state where job_id = $1 and role = any($2::text[]) and parent_task_id is not null
order by ordinal asc, created_at asc`;

const JOB_CONTEXT_SQL = `/* sy:jobContext */
select input_summary -> 'meta' as meta, workflow_hash, job_type from agent_task_state where task_id = $1 and parent_task_id is null`;

/**
 * What a worker does to the tasks it runs: claim a lease, checkpoint each step, finish (complete,
 * skip, fail) or hand the task back, heartbeat; and the reads a task run needs (its job's
 * context, input and workflow version, its upstream's outcomes). Every write presents the lease.
 */
export class TaskLeaseRepository {
  private readonly pool: Pool;
  /*
   * The claims and the gather checkpoints of a worker's concurrent tasks, group-committed: a
   * lone one is written at once, alone; those that arrive while earlier ones are in flight go
   * together in one statement. Each caller gets its own outcome, as if alone (see GroupCommit).
   */
  private readonly claims = new GroupCommit<ClaimItem, ClaimResult>({ writeBatch: (items) => this.claimMany(items), writeOne: (item) => this.claimOne(item) });
  private readonly finishes = new GroupCommit<FinishItem, QuickFinish>({ writeBatch: (items) => this.finishMany(items), writeOne: (item) => this.finishOne(item) });
  private readonly inputCheckpoints = new GroupCommit<InputCheckpointItem, InputCheckpointResult>({
    writeBatch: (items) => this.checkpointsReadingInput(items),
    writeOne: (item) => this.checkpointReadingInputOne(item),
  });

  /** `pool` is the one behind `db` (`DatabaseHandle.pool`); when omitted, drizzle's client is used. */
  constructor(
    private readonly db: Database,
    pool?: Pool,
  ) {
    this.pool = poolBehind(db, pool, 'TaskLeaseRepository');
  }

  /**
   * Takes a pending task for `owner` and marks its job running, in one round trip. The
   * bumped lease version is the fencing token every later write must present.
   */
  async claimTask(taskId: string, owner: string): Promise<ClaimResult> {
    return this.claims.write({ taskId, owner });
  }

  /** One claim alone: a lone one, and each claim of a batch that failed. */
  private async claimOne({ taskId, owner }: ClaimItem): Promise<ClaimResult> {
    const result = await this.pool.query<Record<string, unknown>>({
      name: 'sy-claim-task',
      text: CLAIM_SQL,
      values: [taskId, owner],
    });
    const raw = result.rows[0];
    if (raw) return claimedFrom(raw, owner);
    const current = (await this.pool.query<{ status: TaskStatus }>({ name: 'sy-task-status', text: TASK_STATUS_SQL, values: [taskId] })).rows[0];
    return notClaimed(current?.status);
  }

  /**
   * Claims of one owner in one statement; one result per item, in order. A task asked for twice
   * is claimed once: the later ask is told it runs already. Throws (and the group commit then
   * claims each alone) when the owners differ or the statement fails: one statement is one
   * transaction, so a failed one claimed nothing. Should the claim commit and the status read
   * after it fail, the claims made are refused to their callers as running: those tasks wait,
   * claimed, for the sweeper (as after a claim whose reply was lost); none runs twice.
   */
  private async claimMany(items: readonly ClaimItem[]): Promise<ClaimResult[]> {
    const owner = items[0]!.owner;
    if (items.some((item) => item.owner !== owner)) throw new Error('claims of several owners are not batched');
    const ids = [...new Set(items.map((item) => item.taskId))];
    const result = await this.pool.query<Record<string, unknown>>({ name: 'sy-claim-tasks', text: CLAIM_MANY_SQL, values: [ids, owner] });
    const claimed = new Map(result.rows.map((raw) => [raw.task_id as string, raw]));
    const missing = ids.filter((id) => !claimed.has(id));
    const statuses = new Map<string, TaskStatus>();
    if (missing.length > 0) {
      const current = await this.pool.query<{ task_id: string; status: TaskStatus }>({ name: 'sy-task-statuses', text: TASK_STATUSES_SQL, values: [missing] });
      for (const row of current.rows) statuses.set(row.task_id, row.status);
    }
    const given = new Set<string>();
    return items.map(({ taskId }) => {
      const raw = claimed.get(taskId);
      if (raw && !given.has(taskId)) {
        given.add(taskId);
        return claimedFrom(raw, owner);
      }
      return raw ? notClaimed('running') : notClaimed(statuses.get(taskId));
    });
  }

  /** Records a completed step; refused unless the lease still holds and the step is the next one. */
  async checkpoint(lease: Lease, checkpoint: StepCheckpoint, routes: RouteRecord[], costUsd: number): Promise<void> {
    const result = await this.pool.query({ name: 'sy-checkpoint', text: CHECKPOINT_SQL, values: checkpointValues(lease, checkpoint, routes, costUsd) });
    if (result.rowCount !== 1) throw new LeaseLostError(lease, `checkpoint step ${checkpoint.step}`);
  }

  /**
   * `checkpoint`, returning the job's input without the arrays at `omit` (see `findJobInput`)
   * from the same statement: a task's gather step is followed by its first call, which needs it.
   */
  async checkpointReadingJobInput(lease: Lease, checkpoint: StepCheckpoint, omit: readonly (readonly string[])[]): Promise<unknown> {
    const written = await this.inputCheckpoints.write({ lease, checkpoint, omit });
    if (!written.written) throw new LeaseLostError(lease, `checkpoint step ${checkpoint.step}`);
    return written.jobInput;
  }

  /** One `checkpointReadingJobInput` alone. */
  private async checkpointReadingInputOne({ lease, checkpoint, omit }: InputCheckpointItem): Promise<InputCheckpointResult> {
    const result = await this.pool.query<{ job_input: unknown }>({
      name: `sy-checkpoint-reading-input-${omit.length}`,
      text: checkpointReadingInputSql(omit.length),
      values: [...checkpointValues(lease, checkpoint, [], 0), ...omit],
    });
    return result.rowCount === 1 ? { written: true, jobInput: result.rows[0]!.job_input } : { written: false };
  }

  /**
   * Several in one statement, each under its own fence; one result per item, in order. The same
   * task twice in a batch is not batched (throws: each goes alone). A failed statement wrote nothing.
   */
  private async checkpointsReadingInput(items: readonly InputCheckpointItem[]): Promise<InputCheckpointResult[]> {
    if (new Set(items.map((item) => item.lease.taskId)).size !== items.length) throw new Error('one task twice in a batch');
    const rows = items.map(({ lease, checkpoint, omit }) => ({ task_id: lease.taskId, owner: lease.owner, version: lease.version, step: checkpoint.step, checkpoint, omit }));
    const result = await this.pool.query<{ task_id: string; job_input: unknown }>({
      name: 'sy-checkpoints-reading-input',
      text: CHECKPOINTS_READING_INPUT_SQL,
      values: [JSON.stringify(rows), rows.map((row) => row.task_id)],
    });
    const written = new Map(result.rows.map((row) => [row.task_id, row.job_input]));
    return items.map(({ lease }) => (written.has(lease.taskId) ? { written: true, jobInput: written.get(lease.taskId) } : { written: false }));
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
    // A planner's subtasks go in with its completion: the full transaction.
    if (finish.status === 'success' && finish.subtasks?.length) return this.finishInTransaction(lease, { ...finish, subtasks: finish.subtasks }, resultOf);
    const action = finish.status === 'success' ? 'complete' : 'skip';
    const first = await this.finishes.write({ lease, finish });
    if (first.outcome === 'lost') throw new LeaseLostError(lease, action);
    if (first.outcome !== 'last') return { ready: (first.ready ?? []).map(toReadyTask), jobCompleted: false };
    // The job's last task: nothing was written yet; build the job's result from every outcome
    // and finish the task and the job with it, in one statement.
    const result = resultOf((first.outcomes ?? []).map(toOutcome));
    const last = await this.finishOne({ lease, finish }, { result });
    if (last.outcome === 'lost') throw new LeaseLostError(lease, action);
    if (last.outcome === 'last') throw new Error(`task ${lease.taskId}: the job's last finish was declined again`);
    return { ready: (last.ready ?? []).map(toReadyTask), jobCompleted: last.outcome === 'completed' };
  }

  /**
   * One finish alone: a lone one, and each of a batch that failed (then nothing of the batch was
   * written). With `complete`, the job's last task also completes the job with `complete.result`.
   */
  private async finishOne(item: FinishItem, complete?: { result: unknown }): Promise<QuickFinish> {
    const a = finishArguments(item);
    const result = await this.pool.query<QuickFinish>({
      name: complete ? 'sy-finish-last-task' : 'sy-finish-task',
      text: complete ? FINISH_LAST_SQL : FINISH_FUNCTION_SQL,
      values: [a.task_id, a.owner, a.version, a.skip, a.step, a.checkpoints, a.routes, a.cost, a.output, a.reason, Boolean(complete), JSON.stringify(complete?.result ?? null)],
    });
    return result.rows[0]!;
  }

  /**
   * Several finishes in one statement, in job order; one result per item, in order. The same
   * task twice is not batched (throws: each goes alone). A deadlock with another batch, or any
   * error, fails the statement as a whole: nothing of it was written, and each goes alone.
   */
  private async finishMany(items: readonly FinishItem[]): Promise<QuickFinish[]> {
    if (new Set(items.map((item) => item.lease.taskId)).size !== items.length) throw new Error('one task twice in a batch');
    const order = items.map((_, i) => i).sort((x, y) => compareLeases(items[x]!.lease, items[y]!.lease));
    const args = order.map((i, n) => {
      const a = finishArguments(items[i]!);
      return { n, ...a, checkpoints: JSON.parse(a.checkpoints) as unknown, routes: JSON.parse(a.routes) as unknown, output: JSON.parse(a.output) as unknown };
    });
    const result = await this.pool.query<QuickFinish>({ name: 'sy-finish-tasks', text: FINISH_MANY_SQL, values: [JSON.stringify(args)] });
    if (result.rows.length !== items.length) throw new Error(`a batch of ${items.length} finishes returned ${result.rows.length} rows`);
    const results: QuickFinish[] = new Array<QuickFinish>(items.length);
    order.forEach((i, k) => {
      results[i] = result.rows[k]!;
    });
    return results;
  }

  /** A planner's completion with its subtasks, in one transaction (see `TaskFinish`). */
  private async finishInTransaction(
    lease: Lease,
    finish: Extract<TaskFinish, { status: 'success' }> & { subtasks: NewTaskRow[] },
    resultOf: (outcomes: TaskOutcomeRow[]) => unknown,
  ): Promise<FinishResult> {
    const client = await this.pool.connect();
    try {
      await client.query('begin');
      const fence = [lease.taskId, lease.owner, lease.version];
      const done = await client.query<{ job_id: string }>({
        name: 'sy-complete-task',
        text: COMPLETE_SQL,
        values: [...fence, finish.checkpoint.step, JSON.stringify([finish.checkpoint]), JSON.stringify(finish.routes), finish.costUsd, JSON.stringify(finish.output ?? null)],
      });
      const jobId = done.rows[0]?.job_id;
      if (!jobId) {
        await client.query('rollback');
        throw new LeaseLostError(lease, 'complete');
      }
      await client.query({ name: 'sy-insert-subtasks', text: INSERT_SUBTASKS_SQL, values: [JSON.stringify(finish.subtasks.map(taskInsert.toJson))] });
      await client.query({ name: 'sy-extend-plan-dependents', text: EXTEND_DEPENDENTS_SQL, values: [jobId, lease.taskId, finish.subtasks.map((task) => task.taskId)] });
      const after = await client.query<{ ready: RawReadyTask[]; outcomes: RawOutcome[] | null }>({
        name: 'sy-after-finish',
        text: AFTER_FINISH_SQL,
        values: [jobId, lease.taskId],
      });
      const { ready, outcomes } = after.rows[0]!;
      let jobCompleted = false;
      if (outcomes) {
        const result = resultOf(outcomes.map(toOutcome));
        const completed = await client.query({ name: 'sy-complete-job', text: COMPLETE_JOB_SQL, values: [jobId, JSON.stringify(result ?? null)] });
        jobCompleted = completed.rowCount === 1;
      }
      await client.query('commit');
      return {
        ready: ready.map(toReadyTask),
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
    return (await this.heartbeatMany([lease])).has(lease.taskId);
  }

  /** Heartbeats many leases in one statement (one transaction; `LeaseHeartbeats`); returns the task ids whose lease is still held. */
  async heartbeatMany(leases: readonly Lease[]): Promise<Set<string>> {
    if (leases.length === 0) return new Set();
    const items = leases.map((lease) => ({ task_id: lease.taskId, owner: lease.owner, version: lease.version }));
    const result = await this.pool.query<{ task_id: string }>({ name: 'sy-heartbeats', text: HEARTBEATS_SQL, values: [JSON.stringify(items), leases.map((lease) => lease.taskId)] });
    return new Set(result.rows.map((row) => row.task_id));
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
    const result = await this.pool.query<{ job_input: unknown }>({ name: `sy-job-input-${omit.length}`, text: jobInputSql(omit.length), values: [jobId, ...omit] });
    return result.rows[0]?.job_input;
  }

  async findTask(taskId: string): Promise<TaskRow | undefined> {
    const [row] = await this.db.select().from(t).where(eq(t.taskId, taskId));
    return row;
  }
}

interface ClaimItem {
  taskId: string;
  owner: string;
}

interface InputCheckpointItem {
  lease: Lease;
  checkpoint: StepCheckpoint;
  omit: readonly (readonly string[])[];
}

type InputCheckpointResult = { written: true; jobInput: unknown } | { written: false };

/** A finish without subtasks, for `switchyard_finish_task`. */
interface FinishItem {
  lease: Lease;
  finish: TaskFinish;
}

/** What `switchyard_finish_task` answers. */
interface QuickFinish {
  outcome: 'lost' | 'last' | 'finished' | 'completed';
  ready: RawReadyTask[] | null;
  /** With 'last': every task's outcome, this one's as it will be. */
  outcomes: RawOutcome[] | null;
}

/** The arguments of `switchyard_finish_task` for one finish (JSON values as text). */
function finishArguments({ lease, finish }: FinishItem) {
  const success = finish.status === 'success';
  return {
    task_id: lease.taskId,
    owner: lease.owner,
    version: lease.version,
    skip: !success,
    step: success ? finish.checkpoint.step : 0,
    checkpoints: success ? JSON.stringify([finish.checkpoint]) : '[]',
    routes: JSON.stringify(finish.routes),
    cost: success ? finish.costUsd : 0,
    output: success ? JSON.stringify(finish.output ?? null) : 'null',
    reason: success ? null : finish.reason,
  };
}

/** Job first (one lock order of job roots across batches), then task. */
function compareLeases(a: Lease, b: Lease): number {
  const byJob = (a.jobId ?? '').localeCompare(b.jobId ?? '');
  return byJob !== 0 ? byJob : a.taskId.localeCompare(b.taskId);
}

/** A claimed row (with its job's context) as the claim's result. */
function claimedFrom(raw: Record<string, unknown>, owner: string): ClaimResult {
  const task = toTaskRow(raw);
  // The job's context comes with the claim: a task run needs it at once, and one round trip is cheaper than two.
  const job: JobContext | undefined =
    raw.job_job_type == null
      ? undefined
      : { meta: raw.job_meta, workflowHash: (raw.job_workflow_hash as string | null) ?? null, jobType: raw.job_job_type as string, taskCount: Number(raw.job_task_count) };
  return { claimed: true, task, lease: { taskId: task.taskId, owner, version: task.leaseVersion, jobId: task.jobId }, ...(job ? { job } : {}) };
}

/** Why a task was not claimed, from its status now (undefined: no such task). */
function notClaimed(status: TaskStatus | undefined): ClaimResult {
  if (!status) return { claimed: false, reason: 'missing' };
  if (status === 'pending') return { claimed: false, reason: 'blocked', status };
  return { claimed: false, reason: status === 'running' || status === 'paused' ? 'already_running' : 'finished', status };
}

function checkpointValues(lease: Lease, checkpoint: StepCheckpoint, routes: RouteRecord[], costUsd: number): unknown[] {
  return [lease.taskId, lease.owner, lease.version, checkpoint.step, JSON.stringify([checkpoint]), JSON.stringify(routes), costUsd];
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
    retryBase: Number(raw.retry_base),
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
