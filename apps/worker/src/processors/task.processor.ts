import { WorkerHost } from '@nestjs/bullmq';
import { UnrecoverableError, type Job } from 'bullmq';
import { ZodError } from 'zod';
import { parseQueueJob, type AgentRole } from '@switchyard/contracts';
import { extractTraceContext, withSpan, type Logger } from '@switchyard/observability';
import { applySettlement, settlementFor, type TaskRunner } from '@switchyard/orchestration';
import type { ShutdownSignal } from './shutdown-signal';

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
      const settlement = settlementFor(outcome, payload, Date.now());
      if (settlement.action === 'delay') this.logger.info({ task_id: payload.task_id, queue: this.role }, settlement.reason);
      return applySettlement(settlement, job, token);
    });
  }
}
