import type { TraceCarrier } from '@switchyard/contracts';
import type { NewTaskRow } from '@switchyard/state';
import type { QueuedTask } from '../queues/task-queues';

export interface PlanContext {
  tenantId: string;
  newId: () => string;
  trace: TraceCarrier;
  idempotency?: { key: string; requestHash: string };
}

/** A job as rows to write (one statement), and the tasks to enqueue once they are written: those with no dependency. */
export interface JobPlan {
  jobId: string;
  root: NewTaskRow;
  tasks: NewTaskRow[];
  ready: QueuedTask[];
}
