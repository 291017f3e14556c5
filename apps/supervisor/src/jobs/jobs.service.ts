import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ValidationError, type TaskStatus } from '@switchyard/contracts';
import { injectTraceCarrier, inSpan, type Logger } from '@switchyard/observability';
import type { AppConfig } from '@switchyard/config';
import { TaskQueues, WorkflowCatalog, describeError, parseWorkflowSubmission, planWorkflowJob } from '@switchyard/orchestration';
import { APP_CONFIG, LOGGER, withDeadline } from '@switchyard/platform';
import { AdmissionRepository, JobRepository, TenantBudgetRepository, WebhookOutboxRepository, type NewTaskRow } from '@switchyard/state';
import { AdmissionService } from '../admission/admission.service';
import { ApiError } from '../http/api-error';
import { SUBMISSION_QUEUES } from '../workflows/workflows.module';
import { encodeCursor, type JobListQuery } from './job-list.query';
import { presentJob, presentJobHeader, type JobListItem, type JobResponse } from './job.presenter';
import { requestHash } from './request-hash';
import { checkCallbackAddress } from '../webhooks/callback-address';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i;

export function assertJobId(id: string): void {
  if (!UUID.test(id)) throw new ValidationError([{ path: 'id', message: 'must be a job id (UUID)' }]);
}

@Injectable()
export class JobsService {
  constructor(
    private readonly jobs: JobRepository,
    @Inject(WorkflowCatalog) private readonly catalog: WorkflowCatalog,
    private readonly admission: AdmissionService,
    private readonly admissions: AdmissionRepository,
    private readonly webhooks: WebhookOutboxRepository,
    private readonly budgets: TenantBudgetRepository,
    // Submissions enqueue through the fail-fast connection: a Redis outage must not hold the request.
    @Inject(SUBMISSION_QUEUES) private readonly queues: TaskQueues,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Validates against the job type's workflow and writes the job tree in one statement (Postgres
   * is the record: from here the job is accepted): admitted (`pending`) by that statement when
   * nothing waits and the limits allow, else `queued`, followed by an admission pass. A job
   * with a callback always goes in `queued`, so that its callback is stored before it can run. An
   * admitted job's tasks without dependencies are enqueued (the others as their dependencies
   * finish) within REDIS_REQUEST_TIMEOUT_MS; if the queue cannot take it in time (Redis away), its
   * pending tasks have no queue entry and the sweeper's reconcile enqueues them once Redis
   * answers. A job beyond its tenant's or the fleet's running limit stays queued (202, status
   * `queued`) for a later pass.
   */
  async submit(tenantId: string, body: unknown, idempotencyKey: string | undefined): Promise<{ job_id: string; status: TaskStatus }> {
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw new ValidationError([{ path: 'header Idempotency-Key', message: 'must be 1-255 visible ASCII characters' }]);
    }
    const { workflow, submission } = parseWorkflowSubmission(body, this.catalog.workflows);
    if (submission.callback_url !== undefined) await this.checkCallback(submission.callback_url);
    const hash = requestHash(submission);
    // The job's trace: the plan span's context is stored on every task row and travels with each queue job.
    const { plan, created } = await inSpan('plan job', { 'switchyard.job_type': submission.type, 'switchyard.tenant_id': tenantId }, async (span) => {
      const plan = planWorkflowJob(workflow, submission, {
        tenantId,
        newId: randomUUID,
        trace: injectTraceCarrier(),
        ...(idempotencyKey ? { idempotency: { key: idempotencyKey, requestHash: hash } } : {}),
      });
      span.setAttributes({ 'switchyard.job_id': plan.jobId, 'switchyard.tasks': plan.tasks.length });
      if (submission.callback_url === undefined) {
        return { plan, created: await this.jobs.createJobAdmitting(plan.root, plan.tasks, this.admission.limitsFor(tenantId)) };
      }
      const queued = (row: NewTaskRow): NewTaskRow => ({ ...row, status: 'queued' });
      return { plan, created: { ...(await this.jobs.createJob(queued(plan.root), plan.tasks.map(queued))), admitted: false } };
    });
    if (!created.created) {
      if (created.existing.requestHash !== hash) {
        throw ApiError.conflict('idempotency_conflict', 'this Idempotency-Key was already used with a different request body');
      }
      return { job_id: created.existing.taskId, status: created.existing.status };
    }
    // Nothing of a queued job runs, so its callback is in place before it can end.
    if (submission.callback_url !== undefined) await this.webhooks.setCallback(tenantId, plan.jobId, submission.callback_url);
    const logFields = { job_id: plan.jobId, tenant_id: tenantId, type: submission.type, tasks: plan.tasks.length };
    let admitted: string[] = [plan.jobId];
    try {
      if (!created.admitted) admitted = await this.admission.admitNow([plan.jobId]);
    } catch (error) {
      // The job is stored; the next background pass admits it.
      this.logger.warn({ ...logFields, err: describeError(error) }, 'admission pass failed at submit; the job waits queued');
      return { job_id: plan.jobId, status: 'queued' };
    }
    if (!admitted.includes(plan.jobId)) {
      // Another pass (the interval, another supervisor) may have admitted and started it meanwhile.
      const status = (await this.admissions.jobStatus(tenantId, plan.jobId)) ?? 'queued';
      if (status === 'queued') this.logger.info(logFields, 'job submitted and queued: its tenant or the fleet is at its running limit');
      else this.logger.info(logFields, 'job submitted; admitted by a concurrent admission pass');
      return { job_id: plan.jobId, status };
    }
    try {
      await inSpan('enqueue ready tasks', { 'switchyard.job_id': plan.jobId, 'switchyard.tasks': plan.ready.length }, () =>
        withDeadline(this.queues.enqueue(plan.ready), this.config.REDIS_REQUEST_TIMEOUT_MS, 'enqueueing the job'),
      );
      this.logger.info(logFields, 'job submitted');
    } catch (error) {
      this.logger.warn({ ...logFields, err: describeError(error) }, 'job submitted; the queue did not take it in time, the sweeper enqueues it when Redis answers');
    }
    return { job_id: plan.jobId, status: 'pending' };
  }

  /** SPEC §6: http(s), no credentials, no loopback/private/link-local address unless allowed; signed, so a secret is needed. */
  private async checkCallback(url: string): Promise<void> {
    if (this.config.WEBHOOK_SECRET === undefined) {
      throw new ValidationError([{ path: 'callback_url', message: 'job callbacks are off on this server (WEBHOOK_SECRET is not set)' }]);
    }
    const checked = await checkCallbackAddress(url, this.config.WEBHOOK_ALLOWED_HOSTS);
    if (!checked.ok) throw new ValidationError([{ path: 'callback_url', message: checked.reason }]);
  }

  async get(tenantId: string, jobId: string): Promise<JobResponse> {
    assertJobId(jobId);
    const rows = await this.jobs.findJobTree(tenantId, jobId);
    if (rows.length === 0 || rows[0]?.parentTaskId !== null) throw ApiError.notFound(`job ${jobId}`);
    const job = presentJob(rows);
    if (job.status === 'queued') {
      const position = await this.admissions.queuePosition(tenantId, jobId);
      return position === null ? job : { ...job, queue_position: position };
    }
    const degradation = await this.budgets.degradationOf(tenantId, jobId);
    return degradation === null ? job : { ...job, degraded: { reason: degradation.reason, since: degradation.since.toISOString(), ...degradation.detail } };
  }

  async list(tenantId: string, query: JobListQuery): Promise<{ jobs: JobListItem[]; next_cursor: string | null }> {
    const roots = await this.jobs.listJobs(tenantId, {
      limit: query.limit + 1,
      ...(query.status ? { status: query.status } : {}),
      ...(query.cursor ? { cursor: query.cursor } : {}),
    });
    const page = roots.slice(0, query.limit);
    const summaries = await this.jobs.summarizeJobs(tenantId, page.map((r) => r.taskId));
    const last = page.at(-1);
    return {
      jobs: page.map((root) => presentJobHeader(root, summaries.get(root.taskId) ?? { total: 0, completed: 0, costUsd: 0 })),
      next_cursor: roots.length > query.limit && last ? encodeCursor({ createdAt: last.createdAt, taskId: last.taskId }) : null,
    };
  }

  async cancel(tenantId: string, jobId: string): Promise<{ job_id: string; status: TaskStatus }> {
    assertJobId(jobId);
    const outcome = await this.jobs.cancelJob(tenantId, jobId);
    if (!outcome) throw ApiError.notFound(`job ${jobId}`);
    if (!outcome.cancelled) throw ApiError.conflict('job_finished', `job ${jobId} is already ${outcome.status}`);
    this.logger.info({ job_id: jobId, tenant_id: tenantId }, 'job cancelled');
    return { job_id: jobId, status: 'cancelled' };
  }

  /**
   * Runs a failed or cancelled job again from where it stopped (`JobRepository.retryJob`):
   * its unfinished tasks resume from their checkpoints, its finished ones are kept. The job
   * goes through admission like a new one: `pending` when a pass admits it now (its ready
   * tasks are enqueued by the pass), else `queued`.
   */
  async retry(tenantId: string, jobId: string): Promise<{ job_id: string; status: TaskStatus }> {
    assertJobId(jobId);
    const outcome = await this.jobs.retryJob(tenantId, jobId);
    if (!outcome) throw ApiError.notFound(`job ${jobId}`);
    if (!outcome.retried) throw ApiError.conflict('job_not_retryable', `job ${jobId} is ${outcome.status}; only a failed or cancelled job can be retried`);
    try {
      await this.admission.admitNow();
    } catch (error) {
      // The job is queued again; the next background pass admits it.
      this.logger.warn({ job_id: jobId, tenant_id: tenantId, err: describeError(error) }, 'admission pass failed at retry; the job waits queued');
    }
    const status = (await this.admissions.jobStatus(tenantId, jobId)) ?? 'queued';
    this.logger.info({ job_id: jobId, tenant_id: tenantId, tasks: outcome.tasks, status }, 'job retried');
    return { job_id: jobId, status };
  }
}
