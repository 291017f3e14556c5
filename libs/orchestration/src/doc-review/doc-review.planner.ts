import type { FlowJob } from 'bullmq';
import type { JobSubmission, TaskPayload } from '@switchyard/contracts';
import type { NewTaskRow } from '@switchyard/state';
import type { JobPlan, PlanContext } from '../planning/job-plan';
import { taskJobOptions } from '../queues/queue-options';
import { extractAgent } from './extract.agent';
import { synthesizeAgent } from './synthesize.agent';

/**
 * `doc_review`: one extract task per document, then one synthesize task that reads their
 * summaries. In BullMQ terms the synthesize job is the parent of the extract jobs, so it
 * becomes runnable exactly when every extract has finished.
 */
export function planDocReview(submission: JobSubmission, ctx: PlanContext): JobPlan {
  const jobId = ctx.newId();
  const { question, documents } = submission.input;
  const meta = submission.meta;
  const common = { jobId, tenantId: ctx.tenantId, jobType: submission.type, parentTaskId: jobId } as const;

  const root: NewTaskRow = {
    taskId: jobId,
    jobId,
    tenantId: ctx.tenantId,
    jobType: submission.type,
    parentTaskId: null,
    agentId: 'supervisor',
    role: 'job',
    inputSummary: { question, meta, document_ids: documents.map((d) => d.id), document_count: documents.length },
    totalSteps: documents.length + 1,
    ...(ctx.idempotency ? { idempotencyKey: ctx.idempotency.key, requestHash: ctx.idempotency.requestHash } : {}),
  };

  const extracts: NewTaskRow[] = documents.map((doc, index) => ({
    ...common,
    taskId: ctx.newId(),
    agentId: `extract-${index + 1}`,
    ordinal: index,
    role: extractAgent.role,
    inputSummary: { document_id: doc.id, question, text: doc.text, meta },
    totalSteps: extractAgent.steps.length,
  }));
  const synthesize: NewTaskRow = {
    ...common,
    taskId: ctx.newId(),
    agentId: 'synthesize',
    ordinal: documents.length,
    role: synthesizeAgent.role,
    inputSummary: { question, meta, document_ids: documents.map((d) => d.id) },
    totalSteps: synthesizeAgent.steps.length,
  };

  const options = taskJobOptions(ctx.policy);
  const payload = (taskId: string): TaskPayload => ({ tenant_id: ctx.tenantId, job_id: jobId, task_id: taskId, trace: ctx.trace });
  const flow: FlowJob = {
    name: synthesizeAgent.role,
    queueName: synthesizeAgent.role,
    data: payload(synthesize.taskId),
    opts: { ...options, jobId: synthesize.taskId },
    children: extracts.map((task) => ({
      name: extractAgent.role,
      queueName: extractAgent.role,
      data: payload(task.taskId),
      opts: { ...options, jobId: task.taskId, failParentOnFailure: true },
    })),
  };
  return { jobId, root, tasks: [...extracts, synthesize], flow };
}
