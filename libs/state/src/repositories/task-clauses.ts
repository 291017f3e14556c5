import { sql, type SQL } from 'drizzle-orm';
import type { RouteRecord, TaskStatus, TraceCarrier } from '@switchyard/contracts';
import { agentTaskState as t, type NewTaskRow } from '../schema';
import { jsonRowInsert } from './json-row-insert';

/*
 * The clauses every audience of the task table shares (the tenant API, the worker's leases, the
 * sweeper, admission), each written once. The hot statements built from them are pre-built SQL
 * sent through pg as named statements: parsed and planned once per connection, with no query
 * builder and no row mapping in between. Each starts with a comment naming it (sy:<name>).
 */

/** A value as a jsonb parameter. */
export const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

/** Who may write a running task: the worker holding this exact lease (fencing token). */
export interface Lease {
  taskId: string;
  owner: string;
  version: number;
  /** The task's job, when the lease came from a claim: batched finishes lock job roots in job order. Not part of the fence. */
  jobId?: string;
}

/** A write was refused because the lease is gone: taken over, cancelled or finished. */
export class LeaseLostError extends Error {
  constructor(readonly lease: Lease, action: string) {
    super(`lease lost on task ${lease.taskId} (owner ${lease.owner}, version ${lease.version}) while trying to ${action}`);
    this.name = 'LeaseLostError';
  }
}

/**
 * The lease fence, its one home: a write to a task must present its exact lease (owner and
 * version) while it runs. As text with $1 task, $2 owner, $3 version for the pre-built
 * statements, and as a drizzle condition (`leaseFence`) built from the same text.
 */
export const FENCE = `task_id = $1 and lease_owner = $2 and lease_version = $3 and status = 'running'`;

/** `FENCE` with this lease's values as parameters. */
export function leaseFence(lease: Lease): SQL {
  const values = [lease.taskId, lease.owner, lease.version];
  return sql.join(
    FENCE.split(/\$(\d)/).map((part, i) => (i % 2 === 1 ? sql`${values[Number(part) - 1]}` : sql.raw(part))),
    sql.raw(''),
  );
}

/**
 * The staleness clause, its one home (the sweeper, the admin list, the stale-task gauge): a
 * running task without a heartbeat (`updated_at`) for `staleAfterMs`.
 */
export function staleRunningTask(staleAfterMs: number): SQL {
  return sql`${t.status} = 'running' and ${t.updatedAt} < now() - make_interval(secs => ${staleAfterMs / 1000})`;
}

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

/**
 * A task that may start now, as its queue producer needs it (the finishing worker for its
 * dependents, admission for a job's first tasks): what its payload points at, and the trace it continues.
 */
export interface ReadyTask {
  taskId: string;
  jobId: string;
  tenantId: string;
  role: string;
  traceContext: TraceCarrier | null;
  /** The queue job id its next run must use when not the task id (a retried or resumed task: its earlier queue job still exists). */
  queueJobId?: string | null;
}

/** A `ReadyTask` as the statements return it. */
export interface RawReadyTask {
  task_id: string;
  job_id: string;
  tenant_id: string;
  role: string;
  trace_context: TraceCarrier | null;
  queue_job_id: string | null;
}

export function toReadyTask(r: RawReadyTask): ReadyTask {
  return { taskId: r.task_id, jobId: r.job_id, tenantId: r.tenant_id, role: r.role, traceContext: r.trace_context, ...(r.queue_job_id ? { queueJobId: r.queue_job_id } : {}) };
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

/** A task outcome as the statements return it (a row, or an element of a JSON array). */
export interface RawOutcome {
  task_id: string;
  role: string;
  status: TaskStatus;
  output_summary: unknown;
  item_key: string | null;
}

export function toOutcome(row: RawOutcome): TaskOutcomeRow {
  return { taskId: row.task_id, role: row.role, status: row.status, output: row.output_summary, ...(row.item_key === null ? {} : { key: row.item_key }) };
}

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

/** New rows go in as JSON (see `jsonRowInsert`); these are the database defaults it applies. */
export const taskInsert = jsonRowInsert<NewTaskRow>(t, {
  status: "'pending'::task_status",
  optional: 'false',
  ordinal: '0',
  step_checkpoints: "'[]'::jsonb",
  current_step: '0',
  retry_count: '0',
  retry_base: '0',
  route_targets: "'[]'::jsonb",
  depends_on: "'{}'::uuid[]",
  cost_usd: '0',
  lease_version: '0',
  created_at: 'now()',
  updated_at: 'now()',
});

