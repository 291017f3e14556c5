import { Queue, UnrecoverableError, type ConnectionOptions } from 'bullmq';
import { ZodError } from 'zod';
import { TaskPayloadSchema, type TaskPayload } from '@switchyard/contracts';
import type { ReadyTask } from '@switchyard/state';
import { taskJobOptions, type TaskJobPolicy } from './queue-options';

/** A task to put on its role's queue: what the payload points at, and the trace it continues. */
export type QueuedTask = ReadyTask;

/** The one place a task's queue payload is built (planner, finishing worker, sweeper). */
export function taskPayload(task: QueuedTask): TaskPayload {
  return { tenant_id: task.tenantId, job_id: task.jobId, task_id: task.taskId, trace: task.traceContext ?? {} };
}

/** The one place a queue payload is read; a malformed one can never succeed, so it fails for good. */
export function parseTaskPayload(role: string, data: unknown): TaskPayload {
  try {
    return TaskPayloadSchema.parse(data);
  } catch (error) {
    if (error instanceof ZodError) throw new UnrecoverableError(`malformed ${role} payload: ${error.message}`);
    throw error;
  }
}

/**
 * One BullMQ queue per agent role (the role is the queue name, shared by every workflow that
 * declares it), opened on first use. Every producer enqueues through here with the same options;
 * the queue job id is the task id unless a resumption (sweeper) or a retry gave the task its own.
 */
export class TaskQueues {
  private readonly queues = new Map<string, Queue>();

  constructor(
    private readonly connection: ConnectionOptions,
    private readonly prefix: string,
    private readonly policy: TaskJobPolicy,
    /** Told of each queue's errors (its Redis connection's): without a listener BullMQ prints them to stderr. */
    private readonly onError?: (role: string, error: unknown) => void,
  ) {}

  queue(role: string): Queue {
    let queue = this.queues.get(role);
    if (!queue) {
      queue = new Queue(role, { connection: this.connection, prefix: this.prefix });
      const onError = this.onError;
      if (onError) queue.on('error', (error) => onError(role, error));
      this.queues.set(role, queue);
    }
    return queue;
  }

  /**
   * Opens the queues of these roles now. A queue connects on first use and, until it has, waits
   * for Redis rather than failing: opened ahead (at start, on a workflow reload), a submission
   * during a Redis outage fails fast on a fail-fast connection instead of landing late.
   */
  open(roles: Iterable<string>): void {
    for (const role of roles) this.queue(role);
  }

  /** The roles opened so far. */
  roles(): string[] {
    return [...this.queues.keys()];
  }

  async enqueue(tasks: readonly QueuedTask[], queueJobId: (task: QueuedTask) => string = (task) => task.queueJobId ?? task.taskId): Promise<void> {
    const byRole = new Map<string, QueuedTask[]>();
    for (const task of tasks) byRole.set(task.role, [...(byRole.get(task.role) ?? []), task]);
    const options = taskJobOptions(this.policy);
    await Promise.all(
      [...byRole].map(([role, group]) =>
        this.queue(role).addBulk(group.map((task) => ({ name: role, data: taskPayload(task), opts: { ...options, jobId: queueJobId(task) } }))),
      ),
    );
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
    this.queues.clear();
  }
}
