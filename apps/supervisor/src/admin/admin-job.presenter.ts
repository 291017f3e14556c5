import type { AdminTaskView, JobAttempt, TaskView } from '@switchyard/state';
import { presentJob, presentJobHeader, type JobListItem, type JobResponse, type TaskResponse } from '../jobs/job.presenter';

export interface AdminAttemptResponse {
  step: number | null;
  at: string;
  target: string;
  target_type: string;
  model: string;
  rule: string;
  outcome: string;
  error_class: string | null;
  latency_ms: number;
  cost_usd: number;
  trace_id: string | null;
}

export type AdminTaskResponse = TaskResponse & {
  steps: AdminTaskView['steps'];
  attempts: AdminAttemptResponse[];
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
};

export type AdminJobResponse = Omit<JobResponse, 'tasks'> & {
  tenant_id: string;
  trace_ids: string[];
  duration_ms: number | null;
  tasks: AdminTaskResponse[];
};

export type AdminJobListItem = JobListItem & { tenant_id: string };

const durationMs = (row: Pick<TaskView, 'startedAt' | 'finishedAt'>) =>
  row.startedAt && row.finishedAt ? row.finishedAt.getTime() - row.startedAt.getTime() : null;

function presentAttempt(attempt: JobAttempt): AdminAttemptResponse {
  return {
    step: attempt.step,
    at: attempt.at.toISOString(),
    target: attempt.target,
    target_type: attempt.targetType,
    model: attempt.model,
    rule: attempt.rule,
    outcome: attempt.outcome,
    error_class: attempt.errorClass,
    latency_ms: Math.round(attempt.latencyMs * 10) / 10,
    cost_usd: attempt.costUsd,
    trace_id: attempt.traceId,
  };
}

export function presentAdminJobListItem(root: TaskView, summary: { total: number; completed: number; costUsd: number }): AdminJobListItem {
  return { ...presentJobHeader(root, summary), tenant_id: root.tenantId };
}

/**
 * The operator's job view: the tenant's view of the job plus, per task, its steps (names and
 * times), its upstream attempts from the cost ledger, its duration; and the job's trace ids.
 */
export function presentAdminJob(rows: AdminTaskView[], attempts: JobAttempt[]): AdminJobResponse {
  const base = presentJob(rows);
  const root = rows[0]!;
  const byTask = new Map<string, AdminTaskView>(rows.map((row) => [row.taskId, row]));
  const traceIds = [...new Set(attempts.map((a) => a.traceId).filter((id): id is string => id !== null && id !== ''))];
  return {
    ...base,
    tenant_id: root.tenantId,
    trace_ids: traceIds,
    duration_ms: durationMs(root),
    tasks: base.tasks.map((task) => {
      const row = byTask.get(task.task_id)!;
      return {
        ...task,
        steps: row.steps,
        attempts: attempts.filter((a) => a.taskId === task.task_id).map(presentAttempt),
        started_at: row.startedAt?.toISOString() ?? null,
        finished_at: row.finishedAt?.toISOString() ?? null,
        duration_ms: durationMs(row),
      };
    }),
  };
}
