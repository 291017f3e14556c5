import { WorkerHost } from '@nestjs/bullmq';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { ZodError } from 'zod';
import { parseQueueJob, type AgentRole } from '@switchyard/contracts';
import { extractTraceContext, withSpan, type Logger } from '@switchyard/observability';
import type { TaskRunner } from '@switchyard/orchestration';
import type { ShutdownSignal } from './shutdown-signal';

/** How long a duplicate delivery waits before checking again whether the task's owner finished. */
export const BUSY_RECHECK_MS = 5_000;

/** How long a fan-in task whose dependencies are unfinished waits before checking again. */
export const BLOCKED_RECHECK_MS = 1_000;

/** Pause before the n-th look for an eligible model target: 1, 2, 4, 8, then 15 s. */
export function targetWaitDelayMs(checks: number): number {
  return Math.min(15_000, 1_000 * 2 ** Math.max(0, checks - 1));
}

/**
 * Turns a queue job into a task run and the run's outcome back into what BullMQ expects:
 * return = done, throw = retry with backoff, UnrecoverableError = failed for good.
 */
export abstract class TaskProcessor extends WorkerHost {
  abstract readonly role: AgentRole;

  constructor(
    private readonly runner: TaskRunner,
    private readonly shutdown: ShutdownSignal,
    private readonly logger: Logger,
  ) {
    super();
  }

  async process(job: Job, token?: string): Promise<{ outcome: string }> {
    let payload;
    try {
      payload = parseQueueJob(this.role, job.data).data;
    } catch (error) {
      if (error instanceof ZodError) throw new UnrecoverableError(`malformed ${this.role} payload: ${error.message}`);
      throw error;
    }
    const parent = extractTraceContext(payload.trace);
    return withSpan(`task ${this.role}`, parent, { attributes: { 'switchyard.job_id': payload.job_id, 'switchyard.task_id': payload.task_id } }, async () => {
      const outcome = await this.runner.run(
        payload,
        {
          attemptsMade: job.attemptsMade,
          maxAttempts: job.opts.attempts ?? 1,
          waitedForTargetMs: payload.waiting ? Date.now() - payload.waiting.since : 0,
        },
        this.shutdown.signal,
      );
      switch (outcome.kind) {
        case 'completed':
        case 'already_done':
        case 'lease_lost':
          return { outcome: outcome.kind };
        case 'busy':
          if (outcome.waitingFor === 'dependencies') {
            // A flow parent released before Postgres says every dependency finished (a child
            // job whose worker lost its lease completes in BullMQ): Postgres decides; look again.
            this.logger.info({ task_id: payload.task_id, queue: this.role }, 'task dependencies unfinished; rechecking later');
            await job.moveToDelayed(Date.now() + BLOCKED_RECHECK_MS, token);
            throw new DelayedError();
          }
          // Another worker holds the task (an at-least-once duplicate): look again later,
          // without spending an attempt, so the flow's parent never runs ahead of it.
          this.logger.info({ task_id: payload.task_id, queue: this.role }, 'task held by another worker; rechecking later');
          await job.moveToDelayed(Date.now() + BUSY_RECHECK_MS, token);
          throw new DelayedError();
        case 'waiting_for_target': {
          // Look again with a growing pause (1 s … 15 s), without spending an attempt.
          const checks = (payload.waiting?.checks ?? 0) + 1;
          await job.updateData({ ...payload, waiting: { since: payload.waiting?.since ?? Date.now(), checks } });
          await job.moveToDelayed(Date.now() + targetWaitDelayMs(checks), token);
          throw new DelayedError();
        }
        case 'released':
          throw outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error));
        case 'failed':
          throw new UnrecoverableError(outcome.reason);
        case 'not_runnable':
          throw new UnrecoverableError(`task ${payload.task_id} is ${outcome.status}`);
      }
    });
  }
}
