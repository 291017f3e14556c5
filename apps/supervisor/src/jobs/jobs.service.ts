import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ValidationError, type TaskStatus } from '@switchyard/contracts';
import { injectTraceCarrier, type Logger } from '@switchyard/observability';
import type { AppConfig } from '@switchyard/config';
import { TaskQueues, WorkflowCatalog, describeError, parseWorkflowSubmission, planWorkflowJob } from '@switchyard/orchestration';
import { APP_CONFIG, LOGGER, withDeadline } from '@switchyard/platform';
import { TaskRepository } from '@switchyard/state';
import { ApiError } from '../http/api-error';
import { SUBMISSION_QUEUES } from '../workflows/workflows.module';
import { encodeCursor, type JobListQuery } from './job-list.query';
import { presentJob, presentJobHeader, type JobListItem, type JobResponse } from './job.presenter';
import { requestHash } from './request-hash';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i;

export function assertJobId(id: string): void {
  if (!UUID.test(id)) throw new ValidationError([{ path: 'id', message: 'must be a job id (UUID)' }]);
}

@Injectable()
export class JobsService {
  constructor(
    private readonly tasks: TaskRepository,
    @Inject(WorkflowCatalog) private readonly catalog: WorkflowCatalog,
    // Submissions enqueue through the fail-fast connection: a Redis outage must not hold the request.
    @Inject(SUBMISSION_QUEUES) private readonly queues: TaskQueues,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Validates against the job type's workflow, writes the job tree in one statement (Postgres
   * is the record: from here the job is accepted), then enqueues the tasks without dependencies
   * (the others are enqueued as their dependencies finish) within REDIS_REQUEST_TIMEOUT_MS. If the queue
   * cannot take it in time (Redis away), the job is still accepted: its pending tasks have no
   * queue entry, and the sweeper's reconcile enqueues them once Redis answers again.
   */
  async submit(tenantId: string, body: unknown, idempotencyKey: string | undefined): Promise<{ job_id: string; status: TaskStatus }> {
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw new ValidationError([{ path: 'header Idempotency-Key', message: 'must be 1-255 visible ASCII characters' }]);
    }
    const { workflow, submission } = parseWorkflowSubmission(body, this.catalog.workflows);
    const hash = requestHash(submission);
    const plan = planWorkflowJob(workflow, submission, {
      tenantId,
      newId: randomUUID,
      trace: injectTraceCarrier(),
      ...(idempotencyKey ? { idempotency: { key: idempotencyKey, requestHash: hash } } : {}),
    });
    const created = await this.tasks.createJob(plan.root, plan.tasks);
    if (!created.created) {
      if (created.existing.requestHash !== hash) {
        throw ApiError.conflict('idempotency_conflict', 'this Idempotency-Key was already used with a different request body');
      }
      return { job_id: created.existing.taskId, status: created.existing.status };
    }
    const logFields = { job_id: plan.jobId, tenant_id: tenantId, type: submission.type, tasks: plan.tasks.length };
    try {
      await withDeadline(this.queues.enqueue(plan.ready), this.config.REDIS_REQUEST_TIMEOUT_MS, 'enqueueing the job');
      this.logger.info(logFields, 'job submitted');
    } catch (error) {
      this.logger.warn({ ...logFields, err: describeError(error) }, 'job submitted; the queue did not take it in time, the sweeper enqueues it when Redis answers');
    }
    return { job_id: plan.jobId, status: 'pending' };
  }

  async get(tenantId: string, jobId: string): Promise<JobResponse> {
    assertJobId(jobId);
    const rows = await this.tasks.findJobTree(tenantId, jobId);
    if (rows.length === 0 || rows[0]?.parentTaskId !== null) throw ApiError.notFound(`job ${jobId}`);
    return presentJob(rows);
  }

  async list(tenantId: string, query: JobListQuery): Promise<{ jobs: JobListItem[]; next_cursor: string | null }> {
    const roots = await this.tasks.listJobs(tenantId, {
      limit: query.limit + 1,
      ...(query.status ? { status: query.status } : {}),
      ...(query.cursor ? { cursor: query.cursor } : {}),
    });
    const page = roots.slice(0, query.limit);
    const summaries = await this.tasks.summarizeJobs(page.map((r) => r.taskId));
    const last = page.at(-1);
    return {
      jobs: page.map((root) => presentJobHeader(root, summaries.get(root.taskId) ?? { total: 0, completed: 0, costUsd: 0 })),
      next_cursor: roots.length > query.limit && last ? encodeCursor({ createdAt: last.createdAt, taskId: last.taskId }) : null,
    };
  }

  async cancel(tenantId: string, jobId: string): Promise<{ job_id: string; status: TaskStatus }> {
    assertJobId(jobId);
    const outcome = await this.tasks.cancelJob(tenantId, jobId);
    if (!outcome) throw ApiError.notFound(`job ${jobId}`);
    if (!outcome.cancelled) throw ApiError.conflict('job_finished', `job ${jobId} is already ${outcome.status}`);
    this.logger.info({ job_id: jobId, tenant_id: tenantId }, 'job cancelled');
    return { job_id: jobId, status: 'cancelled' };
  }
}
