import { Inject, Injectable } from '@nestjs/common';
import { extractTraceContext, withSpan } from '@switchyard/observability';
import { TaskQueues } from '@switchyard/orchestration';
import type { AdmittedJob } from '@switchyard/state';

/**
 * Enqueues the tasks of a job that admission just let run. The one seam between admission and
 * the runtime: admission decides which job may start, the starter knows how a job's tasks
 * reach the workers.
 */
export interface JobStarter {
  start(job: AdmittedJob): Promise<void>;
}
export const JOB_STARTER = Symbol('JOB_STARTER');

/**
 * The job's tasks whose dependencies are done (at admission: those without any, read by the
 * admitting statement) go to their role's queue under their task id (a second start is a
 * no-op); the others are enqueued by the worker that finishes their last dependency, as for
 * every job.
 */
@Injectable()
export class QueueJobStarter implements JobStarter {
  constructor(@Inject(TaskQueues) private readonly queues: TaskQueues) {}

  async start({ jobId, ready }: AdmittedJob): Promise<void> {
    // In the job's trace (its tasks carry the plan's context), also when a later admission pass starts it.
    const parent = extractTraceContext(ready[0]?.traceContext ?? {});
    await withSpan('enqueue admitted job', parent, { attributes: { 'switchyard.job_id': jobId, 'switchyard.tasks': ready.length } }, () => this.queues.enqueue(ready));
  }
}
