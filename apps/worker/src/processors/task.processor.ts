import { Inject, Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { extractTraceContext, withSpan, type Logger } from '@switchyard/observability';
import { TaskRunner, applySettlement, parseTaskPayload, settlementFor } from '@switchyard/orchestration';
import { LOGGER } from '@switchyard/platform';
import { ShutdownSignal } from './shutdown-signal';

/**
 * Turns a queue job of any role into a task run and the run's outcome back into what BullMQ
 * expects: return = done, throw = retry with backoff, UnrecoverableError = failed for good.
 * The task row (its job's workflow and its role) picks the agent, not the queue.
 */
@Injectable()
export class TaskProcessor {
  constructor(
    private readonly runner: TaskRunner,
    private readonly shutdown: ShutdownSignal,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async process(role: string, job: Job, token?: string): Promise<{ outcome: string }> {
    const payload = parseTaskPayload(role, job.data);
    const parent = extractTraceContext(payload.trace);
    return withSpan(`task ${role}`, parent, { attributes: { 'switchyard.job_id': payload.job_id, 'switchyard.task_id': payload.task_id } }, async () => {
      const outcome = await this.runner.run(
        payload,
        {
          attemptsMade: job.attemptsMade,
          maxAttempts: job.opts.attempts ?? 1,
          waitedForTargetMs: payload.waiting ? Date.now() - payload.waiting.since : 0,
        },
        this.shutdown.signal,
      );
      const settlement = settlementFor(outcome, payload, Date.now());
      if (settlement.action === 'delay') this.logger.info({ task_id: payload.task_id, queue: role }, settlement.reason);
      return applySettlement(settlement, job, token);
    });
  }
}
