import { and, desc, eq, isNotNull, sql, type SQL } from 'drizzle-orm';
import { union } from 'drizzle-orm/pg-core';
import type { TaskStatus } from '@switchyard/contracts';
import type { Database } from '../database';
import { agentTaskState as t } from '../schema';
import type { TraceCarrier } from '@switchyard/contracts';
import { abandonInFlightAttempts, dependenciesDone, failTaskStatement, staleRunningTask, type Lease } from './task-clauses';

/** A running task whose heartbeat is older than the stale threshold, locked for this sweep. */
export interface StaleTask {
  taskId: string;
  jobId: string;
  tenantId: string;
  role: string;
  agentId: string;
  optional: boolean;
  leaseOwner: string | null;
  leaseVersion: number;
  retryCount: number;
  /** `retry_count` at the job's last retry by request: the retry limit counts from here. */
  retryBase: number;
  currentStep: number;
  totalSteps: number;
  updatedAt: Date;
  traceContext: TraceCarrier | null;
}

export type StaleDecision = { action: 'requeue' } | { action: 'fail'; reason: string } | { action: 'skip' };

export type SweptTask = StaleTask &
  (
    | { action: 'requeue'; newRetryCount: number; newLeaseVersion: number; queueJobId: string }
    | { action: 'fail'; reason: string; jobFailed: boolean }
    /**
     * An optional task at the retry limit: it is given up as `skipped`, not failed, so that its
     * dependents go on and its job can complete. The sweep takes its lease (the dead owner is
     * fenced out); the caller skips it with `TaskLeaseRepository.skipTask(lease, …)`, the same finish
     * path as a worker's, which readies dependents and completes the job. Should the caller die
     * first, the task is stale again under the sweeper's lease and the next sweep gives it up again.
     */
    | { action: 'give_up'; reason: string; lease: Lease }
  );

/** A pending task the reconcile pass looks at: whether its queue entry still exists is Redis's question. */
export interface PendingTask {
  taskId: string;
  jobId: string;
  tenantId: string;
  role: string;
  retryCount: number;
  queueJobId: string | null;
  updatedAt: Date;
  /** Whether a task it depends on is still unfinished. */
  blocked: boolean;
  /** When its last dependency finished (null: it has none, or none finished). */
  depsDoneAt: Date | null;
  traceContext: TraceCarrier | null;
}

export interface PendingCursor {
  updatedAt: Date;
  taskId: string;
}

export interface AdminTaskRow {
  taskId: string;
  jobId: string;
  tenantId: string;
  role: string;
  agentId: string;
  status: TaskStatus;
  leaseOwner: string | null;
  leaseVersion: number;
  retryCount: number;
  currentStep: number;
  totalSteps: number;
  queueJobId: string | null;
  error: string | null;
  updatedAt: Date;
  stale: boolean;
}

/** The queue job id of the n-th resumption of a task (BullMQ ids may not contain ':'). */
export const resumeJobId = (taskId: string, retryCount: number) => `${taskId}.r${retryCount}`;

const staleColumns = {
  taskId: t.taskId,
  jobId: t.jobId,
  tenantId: t.tenantId,
  role: t.role,
  agentId: t.agentId,
  optional: t.optional,
  leaseOwner: t.leaseOwner,
  leaseVersion: t.leaseVersion,
  retryCount: t.retryCount,
  retryBase: t.retryBase,
  currentStep: t.currentStep,
  totalSteps: t.totalSteps,
  updatedAt: t.updatedAt,
  traceContext: t.traceContext,
};

/**
 * What the stale-task sweeper reads and writes. Every query is bounded and walks a partial
 * index (`running` by heartbeat, `pending` by age), so a sweep costs O(stale) / O(page).
 */
export class TaskRecoveryRepository {
  constructor(private readonly db: Database) {}

  /**
   * Locks up to `limit` stale running tasks (`FOR UPDATE SKIP LOCKED`: concurrent sweepers
   * take disjoint sets), asks `decide` what to do with each, and applies it in the same
   * transaction: take the lease and hand the task back as pending (retry_count + 1, lease
   * version + 1, so the dead owner's writes are refused), or fail it for good.
   */
  async sweepStale(options: {
    sweeperId: string;
    staleAfterMs: number;
    limit: number;
    decide: (task: StaleTask, now: Date) => StaleDecision;
  }): Promise<SweptTask[]> {
    return this.db.transaction(async (tx) => {
      const [{ now }] = (await tx.execute<{ now: Date | string }>(sql`select now() as now`)).rows as [{ now: Date | string }];
      const dbNow = now instanceof Date ? now : new Date(now);
      const stale = await tx
        .select(staleColumns)
        .from(t)
        // Tasks only: a job's root row is 'running' while its tasks run, and has no heartbeat of its own.
        .where(and(isNotNull(t.parentTaskId), staleRunningTask(options.staleAfterMs)))
        .orderBy(t.updatedAt)
        .limit(options.limit)
        .for('update', { skipLocked: true });
      const swept: SweptTask[] = [];
      for (const task of stale) {
        const decision = options.decide(task, dbNow);
        if (decision.action === 'skip') continue;
        if (decision.action === 'fail' && task.optional) {
          const lease = { taskId: task.taskId, owner: options.sweeperId, version: task.leaseVersion + 1 };
          await tx
            .update(t)
            .set({ retryCount: sql`${t.retryCount} + 1`, leaseOwner: lease.owner, leaseVersion: lease.version, updatedAt: sql`now()` })
            .where(eq(t.taskId, task.taskId));
          await tx.execute(abandonInFlightAttempts(sql`select ${task.taskId}::uuid`));
          swept.push({ ...task, action: 'give_up', reason: decision.reason, lease });
          continue;
        }
        if (decision.action === 'fail') {
          const where = sql`task_id = ${task.taskId} and status = 'running' and lease_version = ${task.leaseVersion}`;
          const result = await tx.execute<{ done: number; job_failed: number }>(failTaskStatement(where, task.taskId, decision.reason, []));
          // Already cancelled in this sweep, by a sibling's failure taking the job down.
          if (result.rows[0]?.done !== 1) continue;
          await tx.update(t).set({ retryCount: sql`${t.retryCount} + 1`, leaseOwner: options.sweeperId, leaseVersion: sql`${t.leaseVersion} + 1` }).where(eq(t.taskId, task.taskId));
          swept.push({ ...task, action: 'fail', reason: decision.reason, jobFailed: result.rows[0]?.job_failed === 1 });
          continue;
        }
        const newRetryCount = task.retryCount + 1;
        const queueJobId = resumeJobId(task.taskId, newRetryCount);
        await tx
          .update(t)
          .set({
            status: 'pending',
            retryCount: newRetryCount,
            leaseOwner: options.sweeperId,
            leaseVersion: task.leaseVersion + 1,
            queueJobId,
            error: `resumed: no heartbeat from ${task.leaseOwner ?? 'its worker'} since ${task.updatedAt.toISOString()}`,
            updatedAt: sql`now()`,
          })
          .where(eq(t.taskId, task.taskId));
        swept.push({ ...task, action: 'requeue', newRetryCount, newLeaseVersion: task.leaseVersion + 1, queueJobId });
      }
      return swept;
    });
  }

  /**
   * A page of pending tasks, oldest first, after `cursor` (keyset on the pending index), with
   * what the reconcile decision needs: whether a dependency is unfinished, and since when
   * all of them are done.
   */
  async pendingPage(limit: number, cursor?: PendingCursor): Promise<{ now: Date; tasks: PendingTask[] }> {
    const after = cursor ? sql`and (p.updated_at, p.task_id) > (${cursor.updatedAt.toISOString()}::timestamptz, ${cursor.taskId}::uuid)` : sql``;
    const result = await this.db.execute<Record<string, unknown>>(sql`
      select p.task_id, p.job_id, p.tenant_id, p.role, p.retry_count, p.queue_job_id, p.updated_at, p.trace_context, now() as now,
        not ${dependenciesDone('p')} as blocked,
        (select max(d.finished_at) from agent_task_state d where d.task_id = any(p.depends_on)) as deps_done_at
      from agent_task_state p
      where p.status = 'pending' and p.parent_task_id is not null ${after}
      order by p.updated_at, p.task_id
      limit ${limit}`);
    const date = (v: unknown) => (v == null ? null : v instanceof Date ? v : new Date(String(v)));
    const now = result.rows.length
      ? date(result.rows[0]!.now)!
      : date((await this.db.execute<{ now: unknown }>(sql`select now() as now`)).rows[0]?.now)!;
    return {
      now,
      tasks: result.rows.map((r) => ({
        taskId: r.task_id as string,
        jobId: r.job_id as string,
        tenantId: r.tenant_id as string,
        role: r.role as string,
        retryCount: Number(r.retry_count),
        queueJobId: (r.queue_job_id as string | null) ?? null,
        updatedAt: date(r.updated_at)!,
        blocked: r.blocked === true,
        depsDoneAt: date(r.deps_done_at),
        traceContext: (r.trace_context as TraceCarrier | null) ?? null,
      })),
    };
  }

  /**
   * Records that the sweeper is about to enqueue a pending task again; `updated_at` moves so
   * the next sweeps give the new queue entry time before looking again. A compare-and-set on
   * the `updated_at` the sweeper saw: false when the task changed meanwhile (another
   * supervisor's sweeper got there first, or a worker claimed it), and then nothing is enqueued.
   */
  async markRequeued(taskId: string, queueJobId: string, seenUpdatedAt?: Date): Promise<boolean> {
    const conditions = [eq(t.taskId, taskId), eq(t.status, 'pending')];
    if (seenUpdatedAt) conditions.push(eq(t.updatedAt, seenUpdatedAt));
    const result = await this.db
      .update(t)
      .set({ queueJobId, updatedAt: sql`now()` })
      .where(and(...conditions));
    return result.rowCount === 1;
  }

  /**
   * Tasks for the admin view: by status, or stale (running without a heartbeat for
   * `staleAfterMs`), or resumed (retry_count > 0); newest heartbeat first, bounded. Without a
   * filter, the unfinished tasks that are stale or resumed: the union of two bounded scans,
   * each on its own partial index (one `or` would read every pending and running task).
   */
  async listForAdmin(options: { status?: TaskStatus; stale?: boolean; resumed?: boolean; staleAfterMs: number; limit: number }): Promise<AdminTaskRow[]> {
    const staleCondition = staleRunningTask(options.staleAfterMs);
    const resumed = sql`${t.retryCount} > 0`;
    const columns = {
      taskId: t.taskId,
      jobId: t.jobId,
      tenantId: t.tenantId,
      role: t.role,
      agentId: t.agentId,
      status: t.status,
      leaseOwner: t.leaseOwner,
      leaseVersion: t.leaseVersion,
      retryCount: t.retryCount,
      currentStep: t.currentStep,
      totalSteps: t.totalSteps,
      queueJobId: t.queueJobId,
      error: t.error,
      updatedAt: t.updatedAt,
      stale: sql<boolean>`(${staleCondition})`.as('stale'),
    };
    const newest = (conditions: SQL[]) =>
      this.db
        .select(columns)
        .from(t)
        .where(and(isNotNull(t.parentTaskId), ...conditions))
        .orderBy(desc(t.updatedAt))
        .limit(options.limit);
    if (!options.status && !options.stale && !options.resumed) {
      // The literal status list matches the predicate of agent_task_state_resumed_unfinished_idx.
      const resumedUnfinished = sql`${t.status} in ('pending', 'running', 'paused')`;
      return union(newest([staleCondition]), newest([resumed, resumedUnfinished]))
        .orderBy(desc(t.updatedAt))
        .limit(options.limit);
    }
    const conditions: SQL[] = [];
    if (options.status) conditions.push(eq(t.status, options.status));
    if (options.stale) conditions.push(staleCondition);
    if (options.resumed) conditions.push(resumed);
    return newest(conditions);
  }

}
