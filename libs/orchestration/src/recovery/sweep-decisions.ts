import type { StaleDecision, StaleTask } from '@switchyard/state';

export interface StalePolicy {
  staleAfterMs: number;
  /** Attempts a task gets in all (TASK_MAX_ATTEMPTS): past it, a stale task fails instead of resuming. */
  maxAttempts: number;
}

/**
 * What the sweeper does with a running task whose heartbeat stopped. `now` is the database's
 * clock (the same one that wrote `updated_at`), so worker and supervisor clocks never meet.
 */
export function decideStale(task: Pick<StaleTask, 'updatedAt' | 'retryCount' | 'retryBase' | 'leaseOwner'>, now: Date, policy: StalePolicy): StaleDecision {
  const silentMs = now.getTime() - task.updatedAt.getTime();
  // The row was locked by the query's own stale condition; a heartbeat cannot land meanwhile,
  // but keep the rule here, where it is tested.
  if (silentMs < policy.staleAfterMs) return { action: 'skip' };
  // Attempts since the job was last retried by request: a retry by request starts a fresh budget.
  const attempt = task.retryCount - task.retryBase + 1;
  if (attempt >= policy.maxAttempts) {
    return {
      action: 'fail',
      reason: `abandoned: no heartbeat from ${task.leaseOwner ?? 'its worker'} for ${Math.round(silentMs / 1000)} s on attempt ${attempt} of ${policy.maxAttempts}; retry limit reached`,
    };
  }
  return { action: 'requeue' };
}

/** BullMQ job states that will run the task without anyone's help. */
const RUNNABLE_STATES = new Set(['waiting', 'wait', 'delayed', 'prioritized']);

export interface ReconcileInput {
  blocked: boolean;
  updatedAt: Date;
  depsDoneAt: Date | null;
  /** States of the task's known queue jobs (its own id and the last id the sweeper gave it); 'unknown' when missing. */
  queueStates: readonly string[];
}

export type ReconcileDecision = { action: 'enqueue' } | { action: 'leave'; why: 'blocked' | 'recent' | 'queued' };

/**
 * Whether a pending task needs a queue job again (Redis lost it, or its flow parent cannot
 * move). A task still waiting for dependencies is left alone; so is one that changed, or whose
 * dependencies finished, within `graceMs` (its queue entry may be on its way). An `active`
 * job of a task that is still pending after the grace belongs to a dead worker, and a parent
 * waiting on children whose tasks are all done in Postgres waits for nothing that matters:
 * neither counts as queued.
 */
export function decideReconcile(task: ReconcileInput, now: Date, graceMs: number): ReconcileDecision {
  if (task.blocked) return { action: 'leave', why: 'blocked' };
  const settled = Math.max(task.updatedAt.getTime(), task.depsDoneAt?.getTime() ?? 0);
  if (now.getTime() - settled < graceMs) return { action: 'leave', why: 'recent' };
  const queued = task.queueStates.some((state) => RUNNABLE_STATES.has(state));
  return queued ? { action: 'leave', why: 'queued' } : { action: 'enqueue' };
}
