import type { FlowJob } from 'bullmq';
import type { JobSubmission, TraceCarrier } from '@switchyard/contracts';
import type { NewTaskRow } from '@switchyard/state';
import type { TaskJobPolicy } from '../queues/queue-options';

export interface PlanContext {
  tenantId: string;
  newId: () => string;
  trace: TraceCarrier;
  policy: TaskJobPolicy;
  idempotency?: { key: string; requestHash: string };
}

/** A job as rows to write (one transaction) and the BullMQ flow that drives them. */
export interface JobPlan {
  jobId: string;
  root: NewTaskRow;
  tasks: NewTaskRow[];
  flow: FlowJob;
}

export type JobPlanner<S extends JobSubmission = JobSubmission> = (submission: S, ctx: PlanContext) => JobPlan;
