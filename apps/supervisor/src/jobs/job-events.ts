import { TERMINAL_STATUSES, type TaskStatus } from '@switchyard/contracts';
import type { JobResponse } from './job.presenter';

/**
 * What makes a job "changed" for its event stream: its status, queue place, progress, and each
 * task's status and step. Cost, timestamps and outputs alone do not produce an event.
 */
export function jobChangeKey(job: JobResponse): string {
  return JSON.stringify([
    job.status,
    job.queue_position ?? null,
    job.progress.completed,
    job.progress.total,
    job.tasks.map((task) => [task.task_id, task.status, task.current_step]),
  ]);
}

export const isTerminalJobStatus = (status: string): boolean => TERMINAL_STATUSES.includes(status as TaskStatus);

export type JobEventDecision = { emit: false } | { emit: true; event: 'job' | 'end'; key: string };

/** Whether a freshly read job is worth an event after the last one sent (`lastKey`), and whether it is the last. */
export function decideJobEvent(lastKey: string | undefined, job: JobResponse): JobEventDecision {
  const key = jobChangeKey(job);
  if (isTerminalJobStatus(job.status)) return { emit: true, event: 'end', key };
  return key === lastKey ? { emit: false } : { emit: true, event: 'job', key };
}

/** One server-sent event; `data` is JSON on a single line. */
export function formatSseEvent(event: string, id: number, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export const SSE_HEARTBEAT = ': ping\n\n';
