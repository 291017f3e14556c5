import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '@switchyard/config';
import type { Logger } from '@switchyard/observability';
import { TaskQueues, WorkflowVersions, decideReconcile, decideStale, describeError, jobResultOf, workflowOfJob, type QueuedTask } from '@switchyard/orchestration';
import { APP_CONFIG, LOGGER } from '@switchyard/platform';
import { TaskLeaseRepository, TaskRecoveryRepository, resumeJobId, type Lease, type PendingCursor, type PendingTask } from '@switchyard/state';

export interface SweepReport {
  requeued: number;
  failed: number;
  skipped: number;
  reconciled: number;
  checked: number;
}

/**
 * The stale-task sweeper: every SWEEP_INTERVAL_MS, (1) takes over running tasks whose
 * heartbeat stopped (several supervisors may sweep at once: the claim skips locked rows),
 * bumping retry_count and the lease version, and enqueues each again under a new queue job id,
 * or fails it past the retry limit (an optional one is skipped, through the same finish path
 * as a worker's: its dependents are enqueued, and the job completes if it was the last); (2) reconciles the other way: a page of pending tasks is
 * checked against the queues, and one that has no runnable queue job (Redis lost it, or the
 * worker that finished its last dependency died before enqueuing it) and whose dependencies
 * are done is enqueued again. Postgres is the
 * record; Redis is only transport.
 */
@Injectable()
export class StaleTaskSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  readonly sweeperId = `sweeper:${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;
  private cursor: PendingCursor | undefined;
  /** Until then, no takeovers: after an outage, living workers need a heartbeat to catch up. */
  private takeoversPausedUntil = 0;
  private readonly log: Logger;
  private readonly versions = new WorkflowVersions();

  constructor(
    private readonly recovery: TaskRecoveryRepository,
    private readonly tasks: TaskLeaseRepository,
    @Inject(TaskQueues) private readonly queues: TaskQueues,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'sweeper', sweeper_id: this.sweeperId });
  }

  onApplicationBootstrap(): void {
    if (!this.config.SWEEPER_ENABLED) return;
    this.log.info({ interval_ms: this.config.SWEEP_INTERVAL_MS, stale_after_ms: this.config.STALE_AFTER_MS }, 'sweeper started');
    this.schedule();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sweep()
        // A sweep that fails (Postgres or Redis away) is simply tried again next interval;
        // it must never take the supervisor down.
        .catch((error: unknown) => {
          // Postgres (or Redis) was away: every worker's heartbeats failed meanwhile too, so
          // their tasks look stale. Give them two heartbeats to land before taking any over.
          this.takeoversPausedUntil = Date.now() + 2 * this.config.HEARTBEAT_MS + this.config.SWEEP_INTERVAL_MS;
          this.log.warn({ err: describeError(error) }, 'sweep failed; retrying next interval');
        })
        .finally(() => this.schedule());
    }, this.config.SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async sweep(): Promise<SweepReport> {
    const report: SweepReport = { requeued: 0, failed: 0, skipped: 0, reconciled: 0, checked: 0 };
    await this.takeOverStale(report);
    await this.reconcilePending(report);
    if (report.requeued || report.failed || report.skipped || report.reconciled) this.log.info(report, 'sweep');
    return report;
  }

  private async takeOverStale(report: SweepReport): Promise<void> {
    if (Date.now() < this.takeoversPausedUntil) return;
    const policy = { staleAfterMs: this.config.STALE_AFTER_MS, maxAttempts: this.config.TASK_MAX_ATTEMPTS };
    const swept = await this.recovery.sweepStale({
      sweeperId: this.sweeperId,
      staleAfterMs: this.config.STALE_AFTER_MS,
      limit: this.config.SWEEP_BATCH,
      decide: (task, now) => decideStale(task, now, policy),
    });
    for (const task of swept) {
      const ids = { job_id: task.jobId, task_id: task.taskId, role: task.role, previous_owner: task.leaseOwner, step: task.currentStep };
      if (task.action === 'fail') {
        report.failed += 1;
        this.log.warn({ ...ids, reason: task.reason, job_failed: task.jobFailed }, 'stale task failed: retry limit reached');
        continue;
      }
      if (task.action === 'give_up') {
        // If this fails, the task stays running under the sweeper's lease: stale again, given up again.
        await this.skipOptional(task, task.lease, task.reason).then(
          () => (report.skipped += 1),
          (error: unknown) => this.log.warn({ ...ids, err: describeError(error) }, 'could not skip a stale optional task; the next sweep will'),
        );
        continue;
      }
      report.requeued += 1;
      this.log.warn({ ...ids, retry_count: task.newRetryCount, queue_job_id: task.queueJobId }, 'stale task taken over; enqueued to resume');
      // If this add fails (Redis away), the task is pending without a queue job: the
      // reconcile pass of a later sweep enqueues it.
      await this.enqueue(task, task.queueJobId);
    }
  }

  /** A stale optional task at its retry limit: skipped, its dependents enqueued, its job completed when it was the last. */
  private async skipOptional(task: QueuedTask, lease: Lease, reason: string): Promise<void> {
    const { workflow } = await workflowOfJob(this.tasks, this.versions, task.jobId);
    const finished = await this.tasks.skipTask(lease, `skipped: ${reason}`, [], (outcomes) => jobResultOf(workflow, outcomes));
    this.log.warn({ job_id: task.jobId, task_id: task.taskId, role: task.role, reason, job_completed: finished.jobCompleted }, 'stale optional task skipped: retry limit reached');
    // If Redis is away, the reconcile pass enqueues them later.
    if (finished.ready.length) await this.queues.enqueue(finished.ready).catch((error: unknown) => this.log.warn({ err: describeError(error) }, 'could not enqueue ready dependents; reconcile will'));
  }

  private async reconcilePending(report: SweepReport): Promise<void> {
    const { now, tasks } = await this.recovery.pendingPage(this.config.RECONCILE_BATCH, this.cursor);
    const last = tasks.at(-1);
    // Walk the pending index a page per sweep and start over at its end: O(page) per sweep.
    this.cursor = tasks.length < this.config.RECONCILE_BATCH || !last ? undefined : { updatedAt: last.updatedAt, taskId: last.taskId };
    for (const task of tasks) {
      if (task.blocked) continue;
      report.checked += 1;
      const queueStates = await this.queueStates(task);
      const decision = decideReconcile({ ...task, queueStates }, now, this.config.STALE_AFTER_MS);
      if (decision.action !== 'enqueue') continue;
      const canonical = resumeJobId(task.taskId, task.retryCount);
      const jobId = (await this.jobExists(task, canonical)) ? `${canonical}.${now.getTime()}` : canonical;
      if (!(await this.recovery.markRequeued(task.taskId, jobId, task.updatedAt))) continue;
      await this.enqueue(task, jobId);
      report.reconciled += 1;
      this.log.warn({ job_id: task.jobId, task_id: task.taskId, role: task.role, queue_job_id: jobId, queue_states: queueStates }, 'pending task had no runnable queue job; enqueued again');
    }
  }

  private async queueStates(task: PendingTask): Promise<string[]> {
    const queue = this.queues.queue(task.role);
    const ids = [task.taskId, ...(task.queueJobId && task.queueJobId !== task.taskId ? [task.queueJobId] : [])];
    return Promise.all(ids.map((id) => queue.getJobState(id)));
  }

  private async jobExists(task: Pick<PendingTask, 'role'>, jobId: string): Promise<boolean> {
    return (await this.queues.queue(task.role).getJobState(jobId)) !== 'unknown';
  }

  private async enqueue(task: QueuedTask, jobId: string): Promise<void> {
    await this.queues.enqueue([task], () => jobId);
  }
}
