import { Inject, Injectable } from '@nestjs/common';
import { AgentRoleSchema, type TaskPayload } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/config';
import { taskJobOptions } from '@switchyard/orchestration';
import { APP_CONFIG } from '@switchyard/platform';
import { AdmissionRepository } from '@switchyard/state';
import { TASK_QUEUES, type TaskQueues } from '../sweeper/task-queues';

/**
 * Enqueues the tasks of a job that admission just let run. The one seam between admission and
 * the runtime: admission decides which job may start, the starter knows how a job's tasks
 * reach the workers.
 */
export interface JobStarter {
  start(jobId: string): Promise<void>;
}
export const JOB_STARTER = Symbol('JOB_STARTER');

/**
 * Every pending task of the job goes to its role's queue under its task id (a second start is
 * a no-op). Tasks whose dependencies are unfinished are enqueued too: their claim reports
 * them blocked and the worker rechecks shortly without spending an attempt - Postgres decides
 * the order, as for every fan-in.
 */
@Injectable()
export class QueueJobStarter implements JobStarter {
  constructor(
    private readonly admission: AdmissionRepository,
    @Inject(TASK_QUEUES) private readonly queues: TaskQueues,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async start(jobId: string): Promise<void> {
    const tasks = await this.admission.pendingTasksOf(jobId);
    const options = taskJobOptions({ maxAttempts: this.config.TASK_MAX_ATTEMPTS });
    for (const task of tasks) {
      const role = AgentRoleSchema.safeParse(task.role);
      const queue = role.success ? this.queues.get(role.data) : undefined;
      if (!queue) throw new Error(`job ${jobId}: no queue for role "${task.role}"`);
      const payload: TaskPayload = { tenant_id: task.tenantId, job_id: task.jobId, task_id: task.taskId, trace: {} };
      await queue.add(task.role, payload, { ...options, jobId: task.taskId });
    }
  }
}
