import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { TaskPayload } from '@switchyard/contracts';
import type { RunOutcome } from './task-runner';

/** How long a duplicate delivery waits before checking again whether the task's owner finished. */
export const BUSY_RECHECK_MS = 5_000;

/** How long a fan-in task whose dependencies are unfinished waits before checking again. */
export const BLOCKED_RECHECK_MS = 1_000;

/**
 * Pause before the n-th look for a model target: 1, 2, 4, 8, then 15 s, of which the second
 * half is jitter (`random` 0..1), so that the tasks of a job that began to wait together do
 * not all make their trial calls at the same moment.
 */
export function targetWaitDelayMs(checks: number, random: () => number = Math.random): number {
  const ceiling = Math.min(15_000, 1_000 * 2 ** Math.max(0, checks - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

/**
 * What the queue job of a task run becomes, in BullMQ terms: done, delayed without spending
 * an attempt, retried with backoff (an attempt spent), or failed for good. Pure, so the
 * worker app and the benchmark settle outcomes the same way.
 */
export type QueueSettlement =
  | { action: 'complete'; value: { outcome: string } }
  | { action: 'delay'; untilMs: number; reason: string; data?: TaskPayload }
  | { action: 'retry'; error: Error }
  | { action: 'fail'; reason: string };

export function settlementFor(outcome: RunOutcome, payload: TaskPayload, nowMs: number, random: () => number = Math.random): QueueSettlement {
  switch (outcome.kind) {
    case 'completed':
    case 'already_done':
    case 'skipped':
    case 'lease_lost':
      // Lease lost: the worker that took the task over finishes it under its own queue job.
      return { action: 'complete', value: { outcome: outcome.kind } };
    case 'busy':
      return outcome.waitingFor === 'dependencies'
        ? // A flow parent released before Postgres says every dependency finished: Postgres decides.
          { action: 'delay', untilMs: nowMs + BLOCKED_RECHECK_MS, reason: 'task dependencies unfinished; rechecking later' }
        : // Another worker holds the task (an at-least-once duplicate): the flow's parent must not run ahead of it.
          { action: 'delay', untilMs: nowMs + BUSY_RECHECK_MS, reason: 'task held by another worker; rechecking later' };
    case 'waiting_for_target': {
      const checks = (payload.waiting?.checks ?? 0) + 1;
      return {
        action: 'delay',
        untilMs: nowMs + targetWaitDelayMs(checks, random),
        reason: "waiting for a model target (none eligible, or the job's retry budget spent)",
        data: { ...payload, waiting: { since: payload.waiting?.since ?? nowMs, checks } },
      };
    }
    case 'released':
      return { action: 'retry', error: outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error)) };
    case 'failed':
      return { action: 'fail', reason: outcome.reason };
    case 'not_runnable':
      return { action: 'fail', reason: `task ${payload.task_id} is ${outcome.status}` };
  }
}

/**
 * Applies a settlement inside a BullMQ processor: returns the job's value, or throws what
 * BullMQ reads as "delayed" (no attempt spent), "retry with backoff" or "failed for good".
 */
export async function applySettlement(
  settlement: QueueSettlement,
  job: Pick<Job, 'updateData' | 'moveToDelayed'>,
  token: string | undefined,
): Promise<{ outcome: string }> {
  switch (settlement.action) {
    case 'complete':
      return settlement.value;
    case 'delay':
      if (settlement.data) await job.updateData(settlement.data);
      await job.moveToDelayed(settlement.untilMs, token);
      throw new DelayedError();
    case 'retry':
      throw settlement.error;
    case 'fail':
      throw new UnrecoverableError(settlement.reason);
  }
}
