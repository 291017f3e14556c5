import type { AgentRole, RouteRecord, StructuredSummary } from '@switchyard/contracts';
import type { TaskRow } from '@switchyard/state';
import type { ModelRouter } from './model-router.port';

export interface StepContext {
  task: TaskRow;
  /** Summaries of the steps already completed, by step name (restored after a crash). */
  previous: ReadonlyMap<string, unknown>;
  step: number;
  router: ModelRouter;
  /** Reads the finished outputs of a job's tasks in one role (fan-in). */
  readRole(role: AgentRole): Promise<RoleOutput[]>;
  /** Aborted when the task's lease is lost or the worker shuts down. */
  signal: AbortSignal;
}

export interface RoleOutput {
  taskId: string;
  agentId: string;
  status: string;
  input: Record<string, unknown>;
  output: Record<string, unknown> | null;
}

export interface StepResult {
  /** What the checkpoint keeps: everything later steps (or a resumed worker) need. */
  summary: unknown;
  routes?: RouteRecord[];
  costUsd?: number;
}

export interface FinalStepResult extends StepResult {
  output: StructuredSummary & Record<string, unknown>;
  /** Set by the task that completes its job: becomes the job's `result`. */
  jobResult?: Record<string, unknown>;
}

export interface StepDefinition {
  name: string;
  run(ctx: StepContext): Promise<StepResult>;
}

export interface FinalStepDefinition {
  name: string;
  run(ctx: StepContext): Promise<FinalStepResult>;
}

/** An agent role: an ordered list of checkpointed steps, the last of which yields the output. */
export interface AgentDefinition {
  role: AgentRole;
  /**
   * Fan-in: roles whose tasks (in the same job) must all have finished before a task of this
   * role may start. Checked in Postgres when the task is claimed, so it holds whatever the
   * queue does (a flow parent released early, a job rebuilt after Redis lost it).
   */
  after?: readonly AgentRole[];
  steps: [...StepDefinition[], FinalStepDefinition];
}

