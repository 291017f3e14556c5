import type { TaskView } from '@switchyard/state';
import { tenantTaskError, type TenantTaskError } from './tenant-task-error';

export interface TaskResponse {
  task_id: string;
  parent_task_id: string | null;
  agent_id: string;
  role: string;
  /** The tasks (ids) this one waits for (fan-in). */
  depends_on: string[];
  status: string;
  optional: boolean;
  current_step: number;
  total_steps: number;
  retry_count: number;
  route_targets: unknown[];
  output_summary: unknown;
  error?: TenantTaskError;
  cost_usd: number;
  updated_at: string;
}

export interface JobResponse {
  job_id: string;
  type: string;
  status: string;
  /** While `queued`: 1 for the tenant's next job to be admitted. */
  queue_position?: number;
  /** Its calls ran with fewer targets than its routes allow, e.g. `daily_budget_spent`: cloud targets excluded. */
  degraded?: { reason: string; since: string } & Record<string, unknown>;
  progress: { completed: number; total: number };
  result?: unknown;
  error?: TenantTaskError;
  cost?: { usd: number };
  created_at: string;
  updated_at: string;
  tasks: TaskResponse[];
}

export type JobListItem = Omit<JobResponse, 'tasks' | 'result'>;

const roundUsd = (value: number) => Math.round(value * 1e6) / 1e6;

export function presentTask(task: TaskView): TaskResponse {
  return {
    task_id: task.taskId,
    parent_task_id: task.parentTaskId,
    agent_id: task.agentId,
    role: task.role,
    depends_on: task.dependsOn,
    status: task.status,
    optional: task.optional,
    current_step: task.currentStep,
    total_steps: task.totalSteps,
    retry_count: task.retryCount,
    route_targets: task.routeTargets,
    output_summary: task.outputSummary ?? null,
    ...(task.error ? { error: tenantTaskError(task.error) } : {}),
    cost_usd: roundUsd(task.costUsd),
    updated_at: task.updatedAt.toISOString(),
  };
}

/** A job tree (root first) as the API shows it; progress and cost roll up from the tasks. */
export function presentJob(rows: TaskView[]): JobResponse {
  const [root, ...tasks] = rows;
  if (!root || root.parentTaskId !== null) throw new Error('job tree must start with its root row');
  const completed = tasks.filter((t) => t.status === 'success').length;
  const cost = tasks.reduce((sum, t) => sum + t.costUsd, 0);
  return {
    ...presentJobHeader(root, { total: tasks.length, completed, costUsd: cost }),
    ...(root.status === 'success' && root.outputSummary ? { result: root.outputSummary } : {}),
    tasks: tasks.map(presentTask),
  };
}

export function presentJobHeader(root: TaskView, summary: { total: number; completed: number; costUsd: number }): JobListItem {
  return {
    job_id: root.taskId,
    type: root.jobType,
    status: root.status,
    progress: { completed: summary.completed, total: summary.total },
    ...(root.error ? { error: tenantTaskError(root.error) } : {}),
    cost: { usd: roundUsd(summary.costUsd) },
    created_at: root.createdAt.toISOString(),
    updated_at: root.updatedAt.toISOString(),
  };
}
