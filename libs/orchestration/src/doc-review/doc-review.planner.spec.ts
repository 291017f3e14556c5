import type { FlowJobNode } from 'bullmq';
import { TaskPayloadSchema, parseJobSubmission, type JobSubmission, type TaskPayload } from '@switchyard/contracts';
import type { PlanContext } from '../planning/job-plan';
import { planJob } from '../planning/job-planners';
import { taskJobOptions } from '../queues/queue-options';
import { planDocReview } from './doc-review.planner';

const TRACE = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'vendor=1' };

/** Valid v4-shaped ids in a fixed order, so every id in the plan is predictable. */
function sequentialIds(): () => string {
  let n = 0;
  return () => {
    n += 1;
    return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
  };
}
const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

function context(overrides: Partial<PlanContext> = {}): PlanContext {
  return { tenantId: 'acme', newId: sequentialIds(), trace: TRACE, policy: { maxAttempts: 4 }, ...overrides };
}

function submission(documentCount = 3, meta: Record<string, unknown> = { sensitivity: 'sensitive' }): JobSubmission {
  return parseJobSubmission({
    type: 'doc_review',
    input: {
      question: 'What changed?',
      documents: Array.from({ length: documentCount }, (_, i) => ({ id: `doc-${i + 1}`, text: `text of document ${i + 1}` })),
    },
    meta,
  });
}

describe('planDocReview', () => {
  it('makes one root row for the job', () => {
    const plan = planDocReview(submission(), context());
    expect(plan.jobId).toBe(id(1));
    expect(plan.root).toMatchObject({
      taskId: id(1),
      jobId: id(1),
      parentTaskId: null,
      tenantId: 'acme',
      jobType: 'doc_review',
      agentId: 'supervisor',
      role: 'job',
      totalSteps: 4,
    });
    expect(plan.root.inputSummary).toEqual({
      question: 'What changed?',
      meta: { sensitivity: 'sensitive', priority: 'normal', tags: [] },
      document_ids: ['doc-1', 'doc-2', 'doc-3'],
      document_count: 3,
    });
    // The root never carries the documents' text.
    expect(JSON.stringify(plan.root.inputSummary)).not.toContain('text of document');
  });

  it('makes one extract row per document, with that document in its input', () => {
    const plan = planDocReview(submission(), context());
    const extracts = plan.tasks.filter((task) => task.role === 'extract');
    expect(extracts).toHaveLength(3);
    extracts.forEach((task, index) => {
      expect(task).toMatchObject({
        taskId: id(index + 2),
        jobId: id(1),
        parentTaskId: id(1),
        tenantId: 'acme',
        jobType: 'doc_review',
        agentId: `extract-${index + 1}`,
        role: 'extract',
        totalSteps: 2,
      });
      expect(task.inputSummary).toEqual({
        document_id: `doc-${index + 1}`,
        question: 'What changed?',
        text: `text of document ${index + 1}`,
        meta: { sensitivity: 'sensitive', priority: 'normal', tags: [] },
      });
    });
  });

  it('makes one synthesize row that carries no document text', () => {
    const plan = planDocReview(submission(), context());
    const synth = plan.tasks.filter((task) => task.role === 'synthesize');
    expect(synth).toHaveLength(1);
    expect(synth[0]).toMatchObject({
      taskId: id(5),
      jobId: id(1),
      parentTaskId: id(1),
      tenantId: 'acme',
      agentId: 'synthesize',
      totalSteps: 2,
    });
    expect(synth[0]!.inputSummary).toEqual({
      question: 'What changed?',
      meta: { sensitivity: 'sensitive', priority: 'normal', tags: [] },
      document_ids: ['doc-1', 'doc-2', 'doc-3'],
    });
    expect(JSON.stringify(synth[0]!.inputSummary)).not.toContain('text of document');
    expect(plan.tasks).toHaveLength(4);
    expect(new Set([plan.root.taskId, ...plan.tasks.map((t) => t.taskId)]).size).toBe(5);
  });

  it('builds a flow whose parent is the synthesize job and whose children are the extracts', () => {
    const policy = { maxAttempts: 4 };
    const plan = planDocReview(submission(), context({ policy }));
    const synthId = plan.tasks.find((t) => t.role === 'synthesize')!.taskId;
    const extractIds = plan.tasks.filter((t) => t.role === 'extract').map((t) => t.taskId);

    expect(plan.flow.name).toBe('synthesize');
    expect(plan.flow.queueName).toBe('synthesize');
    expect(plan.flow.opts).toEqual({ ...taskJobOptions(policy), jobId: synthId });
    expect(plan.flow.opts?.attempts).toBe(4);
    expect(plan.flow.data).toEqual({ tenant_id: 'acme', job_id: id(1), task_id: synthId, trace: TRACE });

    const children = plan.flow.children as FlowJobNode[];
    expect(children).toHaveLength(3);
    children.forEach((child, index) => {
      expect(child.name).toBe('extract');
      expect(child.queueName).toBe('extract');
      expect(child.opts).toEqual({ ...taskJobOptions(policy), jobId: extractIds[index], failParentOnFailure: true });
      expect(child.data).toEqual({ tenant_id: 'acme', job_id: id(1), task_id: extractIds[index], trace: TRACE });
      expect(child.children ?? []).toHaveLength(0);
    });
  });

  it('gives every queue payload only what the payload schema allows', () => {
    const plan = planDocReview(submission(2), context());
    const payloads = [plan.flow.data, ...(plan.flow.children ?? []).map((c) => c.data)] as TaskPayload[];
    for (const payload of payloads) {
      expect(TaskPayloadSchema.parse(payload)).toEqual(payload);
      expect(payload.trace).toEqual(TRACE);
    }
  });

  it('puts the idempotency key and request hash on the root only', () => {
    const plan = planDocReview(submission(), context({ idempotency: { key: 'key-1', requestHash: 'hash-1' } }));
    expect(plan.root.idempotencyKey).toBe('key-1');
    expect(plan.root.requestHash).toBe('hash-1');
    for (const task of plan.tasks) {
      expect(task.idempotencyKey).toBeUndefined();
      expect(task.requestHash).toBeUndefined();
    }
  });

  it('leaves the idempotency fields off when there is no key', () => {
    const plan = planDocReview(submission(), context());
    expect(plan.root).not.toHaveProperty('idempotencyKey');
    expect(plan.root).not.toHaveProperty('requestHash');
  });

  it('is deterministic for the same ids', () => {
    expect(planDocReview(submission(), context())).toEqual(planDocReview(submission(), context()));
  });

  it('handles a single document', () => {
    const plan = planDocReview(submission(1), context());
    expect(plan.root.totalSteps).toBe(2);
    expect(plan.tasks.map((t) => t.role)).toEqual(['extract', 'synthesize']);
    expect(plan.flow.children).toHaveLength(1);
  });
});

describe('planJob', () => {
  it('dispatches doc_review to planDocReview', () => {
    expect(planJob(submission(), context())).toEqual(planDocReview(submission(), context()));
  });
});
