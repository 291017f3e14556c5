import { randomUUID } from 'node:crypto';
import type { JobMeta, RequestMeta, RouteRecord, TaskPayload } from '@switchyard/contracts';
import { inSpan, type Logger } from '@switchyard/observability';
import { LeaseLostError, type JobContext, type Lease, type StepCheckpoint, type TaskLeaseRepository, type TaskRow } from '@switchyard/state';
import {
  renderMessages,
  referencesOf,
  stepsOf,
  taskTimeoutMs,
  withItemKey,
  type CallStep,
  type CompiledAgent,
  type CompiledWorkflow,
  type PlannedSubtask,
} from '@switchyard/workflows';
import {
  CallCheckpointSchema,
  GatheredSchema,
  TaskInputSchema,
  callMeta,
  gatherRolesOf,
  gatherUpstream,
  jobResultOf,
  parseJobMeta,
  renderContext,
  runCallStep,
  type Gathered,
} from '../agents/agent-runtime';
import { stepCallFields } from '../agents/model-call-headers';
import type { ModelAttempt, ModelRouter } from '../agents/model-router.port';
import { tracedModelRouter } from '../agents/traced-model-router';
import { routesFromAttempts } from '../agents/structured-summary';
import { materialisePlan } from '../planning/plan-materialisation';
import type { QueuedTask } from '../queues/task-queues';
import { workflowOfJob, type WorkflowVersions } from '../workflows/workflow-versions';
import { describeError, isNoEligibleTarget, isRetryBudgetSpent, isTransient } from './failure';
import { LeaseHeartbeats } from './lease-heartbeats';

export interface TaskRunnerDeps {
  tasks: TaskLeaseRepository;
  router: ModelRouter;
  /** Compiled workflow versions by hash: a task runs the definition its job was planned with. */
  versions: WorkflowVersions;
  /** Puts the tasks that became ready on their queues (after the finishing commit). */
  enqueue: (tasks: QueuedTask[]) => Promise<void>;
  workerId: string;
  logger: Logger;
  heartbeatMs: number;
  /**
   * How long a task may wait for a model target before it fails: for an eligible one (all
   * down), or for one that answers its trial call while the job's retry budget is spent.
   */
  maxTargetWaitMs: number;
  /** How long an optional task waits for an eligible target before it is skipped. */
  optionalTargetWaitMs: number;
  /**
   * Whether a call with this meta may go to a cloud target now (an eligible candidate is
   * cloud): a task whose calls all stay local gets the shorter default timeout. Default: yes.
   */
  mayUseCloud?: (meta: RequestMeta) => boolean;
  /** Told of every step run, for metrics; must not throw. */
  observeStep?: (step: StepObservation) => void;
  now?: () => Date;
  /** Ids of a planner's subtask rows. Default: random UUIDs. */
  newId?: () => string;
}

/** One run of one step of a task. */
export interface StepObservation {
  role: string;
  kind: 'gather' | 'call';
  outcome: 'ok' | 'error';
  seconds: number;
}

export interface AttemptInfo {
  /** Attempts that already failed before this one. */
  attemptsMade: number;
  maxAttempts: number;
  /** How long the task has already waited for an eligible model target, in ms. */
  waitedForTargetMs?: number;
}

export type RunOutcome =
  | { kind: 'completed'; taskId: string }
  | { kind: 'already_done'; taskId: string }
  /**
   * Not runnable now: another worker holds it (a duplicate delivery), or, with
   * `waitingFor: 'dependencies'`, a task it depends on has not finished yet.
   */
  | { kind: 'busy'; taskId: string; waitingFor?: 'owner' | 'dependencies' }
  | { kind: 'not_runnable'; taskId: string; status: string }
  | { kind: 'lease_lost'; taskId: string }
  | { kind: 'released'; taskId: string; error: unknown }
  | { kind: 'waiting_for_target'; taskId: string; reason: string }
  | { kind: 'skipped'; taskId: string; reason: string }
  | { kind: 'failed'; taskId: string; reason: string; jobFailed: boolean };

class LeaseLostSignal extends Error {}

/** The task ran past its `timeout_ms` (or the default): it ends as failed, or skipped when optional. */
class TaskTimeoutSignal extends Error {}

/** A failed model call reports its upstream attempts (the router's errors carry them): keep them on the task. */
function routesOfFailedCall(error: unknown, step: number): RouteRecord[] {
  const attempts = (error as { attempts?: unknown } | null)?.attempts;
  return Array.isArray(attempts) ? routesFromAttempts(step, attempts as ModelAttempt[]) : [];
}

/**
 * The router as a task's steps see it: every call carries the job's size, which sizes the job's
 * retry budget, and whether this is the task's first lease (then no earlier run of it can have
 * stored an answer, and the paid-once lookup is left out).
 */
function withTaskContext(router: ModelRouter, jobTaskCount: number | undefined, lease: Lease): ModelRouter {
  const taskContext = { ...(jobTaskCount === undefined ? {} : { jobTaskCount }), ...(lease.version === 1 ? { firstLease: true } : {}) };
  if (Object.keys(taskContext).length === 0) return router;
  return {
    chat: (request) => router.chat(request.context === undefined ? request : { ...request, context: { ...request.context, ...taskContext } }),
    reportBadOutput: (target) => router.reportBadOutput?.(target),
  };
}

/** What a claimed task runs: its workflow version and agent. */
interface Assignment {
  workflow: CompiledWorkflow;
  agent: CompiledAgent;
  jobMeta: JobMeta;
  /** From the claim (which brings the job's context with the task). */
  jobTaskCount?: number;
}

/**
 * Runs one task of any workflow: claims its lease, finds its agent in the workflow version its
 * job was planned with, resumes at its checkpointed step, runs the remaining steps (gather, then
 * each call) with a checkpoint after each, and records the outcome. Every write presents the
 * lease, so a worker that lost its task can no longer change it.
 */
export class TaskRunner {
  private readonly now: () => Date;
  private readonly heartbeats: LeaseHeartbeats;

  constructor(private readonly deps: TaskRunnerDeps) {
    this.now = deps.now ?? (() => new Date());
    this.heartbeats = new LeaseHeartbeats(deps.tasks, deps.heartbeatMs, deps.logger);
  }

  async run(payload: TaskPayload, attempt: AttemptInfo, shutdown: AbortSignal): Promise<RunOutcome> {
    const { tasks, workerId } = this.deps;
    const claim = await tasks.claimTask(payload.task_id, workerId);
    if (!claim.claimed) {
      if (claim.reason === 'already_running') return { kind: 'busy', taskId: payload.task_id, waitingFor: 'owner' };
      if (claim.reason === 'blocked') return { kind: 'busy', taskId: payload.task_id, waitingFor: 'dependencies' };
      if (claim.status === 'success' || claim.status === 'skipped') return { kind: 'already_done', taskId: payload.task_id };
      return { kind: 'not_runnable', taskId: payload.task_id, status: claim.status ?? 'missing' };
    }
    const { task, lease, job } = claim;
    const log = this.deps.logger.child({ job_id: task.jobId, task_id: task.taskId, role: task.role, lease_version: lease.version });
    let assignment: Assignment;
    try {
      assignment = await this.assignment(task, job);
    } catch (error) {
      const reason = describeError(error);
      const { jobFailed } = await tasks.failTask(lease, reason, []);
      log.error({ err: reason }, 'task failed: no agent for it');
      return { kind: 'failed', taskId: task.taskId, reason, jobFailed };
    }

    const stop = new AbortController();
    const onShutdown = () => stop.abort(shutdown.reason);
    shutdown.addEventListener('abort', onShutdown, { once: true });
    const stopHeartbeats = this.heartbeats.watch(lease, () => {
      if (!stop.signal.aborted) stop.abort(new LeaseLostSignal(`lease of task ${lease.taskId} lost`));
    });
    const timeoutMs = this.timeoutOf(assignment);
    const deadline = setTimeout(() => stop.abort(new TaskTimeoutSignal(`timeout: the task ran longer than its ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
    deadline.unref();
    const progress = { step: task.currentStep };
    try {
      log.info({ step: task.currentStep, total_steps: task.totalSteps, attempt: attempt.attemptsMade + 1 }, 'task started');
      await this.runSteps(assignment, task, lease, stop.signal, progress, log);
      log.info('task completed');
      return { kind: 'completed', taskId: task.taskId };
    } catch (error) {
      if (error instanceof LeaseLostError || stop.signal.reason instanceof LeaseLostSignal) {
        log.warn({ err: describeError(error) }, 'lease lost: stopping work on this task');
        return { kind: 'lease_lost', taskId: task.taskId };
      }
      if (stop.signal.reason instanceof TaskTimeoutSignal) return await this.recordTimeout(stop.signal.reason.message, task, assignment, lease, routesOfFailedCall(error, progress.step), log);
      return await this.recordFailure(error, task, assignment, lease, attempt, shutdown.aborted, routesOfFailedCall(error, progress.step), log);
    } finally {
      clearTimeout(deadline);
      stopHeartbeats();
      shutdown.removeEventListener('abort', onShutdown);
    }
  }

  /** The agent's `timeout_ms`, else 90 s when every call of the task would go to a local target now, 180 s otherwise. */
  private timeoutOf({ agent, jobMeta }: Assignment): number {
    const mayUseCloud = this.deps.mayUseCloud ?? (() => true);
    const calls = agent.steps.filter((step): step is CallStep => step.kind === 'call');
    return taskTimeoutMs(agent, !calls.some((step) => mayUseCloud(callMeta(step, jobMeta))));
  }

  private async recordTimeout(reason: string, task: TaskRow, { workflow }: Assignment, lease: Lease, routes: RouteRecord[], log: Logger): Promise<RunOutcome> {
    try {
      if (task.optional) return await this.skip(lease, `skipped: ${reason}`, routes, workflow, log);
      const { jobFailed } = await this.deps.tasks.failTask(lease, reason, routes);
      log.error({ err: reason, job_failed: jobFailed }, 'task failed: timeout');
      return { kind: 'failed', taskId: lease.taskId, reason, jobFailed };
    } catch (writeError) {
      if (writeError instanceof LeaseLostError) return { kind: 'lease_lost', taskId: lease.taskId };
      throw new Error(`could not record the timeout of task ${lease.taskId}`, { cause: writeError });
    }
  }

  private async assignment(task: TaskRow, job: JobContext | undefined): Promise<Assignment> {
    const { workflow, meta } = await workflowOfJob(this.deps.tasks, this.deps.versions, task.jobId, job);
    const agent = workflow.agentsByRole.get(task.role);
    if (!agent) throw new Error(`workflow "${workflow.type}" has no agent with role "${task.role}"`);
    return { workflow, agent, jobMeta: parseJobMeta(meta), ...(job ? { jobTaskCount: job.taskCount } : {}) };
  }

  private async runSteps(
    { workflow, agent, jobMeta, jobTaskCount }: Assignment,
    task: TaskRow,
    lease: Lease,
    signal: AbortSignal,
    progress: { step: number },
    log: Logger,
  ): Promise<void> {
    const steps = stepsOf(agent);
    const taskInput = TaskInputSchema.parse(task.inputSummary);
    let gathered: Gathered | undefined;
    const stepOutputs: Record<string, unknown> = {};
    for (const checkpoint of task.stepCheckpoints) {
      const definition = steps[checkpoint.step];
      if (definition?.kind === 'gather') gathered = GatheredSchema.parse(checkpoint.summary);
      else if (definition) stepOutputs[definition.name] = CallCheckpointSchema.parse(checkpoint.summary).output;
    }
    let input: unknown;
    const last = steps.length - 1;
    const router = tracedModelRouter(withTaskContext(this.deps.router, jobTaskCount, lease));
    for (let step = task.currentStep; step <= last; step += 1) {
      progress.step = step;
      signal.throwIfAborted();
      const definition = steps[step]!;
      const stepStarted = performance.now();
      let stepOutcome: StepObservation['outcome'] = 'error';
      try {
        await inSpan(`step ${definition.name}`, { 'switchyard.step': step, 'switchyard.step_kind': definition.kind }, async () => {
          const checkpointOf = (summary: unknown): StepCheckpoint => ({ step, name: definition.name, summary, completed_at: this.now().toISOString() });
          if (definition.kind === 'gather') {
            // Fan-in: the upstream tasks' outputs and summaries, read from Postgres, never their raw text.
            gathered = gatherUpstream(agent, workflow, await this.deps.tasks.findTaskOutcomes(task.jobId, gatherRolesOf(agent, workflow)), task.dependsOn);
            // The call steps after it need the job's input: it comes back with the checkpoint.
            input = await this.deps.tasks.checkpointReadingJobInput(lease, checkpointOf(gathered), inputArraysNotRead(workflow, agent));
            return;
          }
          input ??= await this.deps.tasks.findJobInput(task.jobId, inputArraysNotRead(workflow, agent));
          const { messages, warnings } = renderMessages(definition, renderContext(input, taskInput, gathered ?? { outputs: {}, summaries: {} }, stepOutputs));
          if (warnings.length) log.warn({ step, warnings }, 'template placeholders without a value rendered empty');
          const result = await runCallStep(router, definition, messages, callMeta(definition, jobMeta), stepCallFields({ task, step, signal }));
          stepOutputs[definition.name] = result.output;
          const checkpoint = checkpointOf({ raw: result.raw, output: result.output });
          if (step < last) {
            await this.deps.tasks.checkpoint(lease, checkpoint, result.routes, result.costUsd);
            log.debug({ step, name: definition.name }, 'step checkpointed');
            return;
          }
          const output = withItemKey(agent, result.output, taskInput.item);
          // A planner's validated plan becomes its subtasks' rows, written with its completion.
          const subtasks = definition.plan ? materialisePlan((result.output as { subtasks: PlannedSubtask[] }).subtasks, task, workflow, this.deps.newId ?? randomUUID) : [];
          if (subtasks.length) log.info({ subtasks: subtasks.map((s) => ({ task_id: s.taskId, role: s.role })) }, 'plan accepted');
          const finished = await this.deps.tasks.completeTask(lease, checkpoint, output, result.routes, result.costUsd, (outcomes) => jobResultOf(workflow, outcomes), subtasks);
          if (finished.jobCompleted) log.info('job completed');
          await this.enqueueReady(finished.ready, log);
        });
        stepOutcome = 'ok';
      } finally {
        this.deps.observeStep?.({ role: task.role, kind: definition.kind, outcome: stepOutcome, seconds: (performance.now() - stepStarted) / 1000 });
      }
    }
  }

  /** After the finishing commit; if Redis is away the sweeper's reconcile enqueues them later. */
  private async enqueueReady(ready: QueuedTask[], log: Logger): Promise<void> {
    if (ready.length === 0) return;
    try {
      await this.deps.enqueue(ready);
      log.debug({ ready: ready.map((t) => t.taskId) }, 'dependents enqueued');
    } catch (error) {
      log.warn({ err: describeError(error), ready: ready.map((t) => t.taskId) }, 'could not enqueue ready dependents; the sweeper will');
    }
  }

  private async recordFailure(
    error: unknown,
    task: TaskRow,
    { workflow }: Assignment,
    lease: Lease,
    attempt: AttemptInfo,
    shuttingDown: boolean,
    routes: RouteRecord[],
    log: Logger,
  ): Promise<RunOutcome> {
    const reason = describeError(error);
    const lastAttempt = attempt.attemptsMade + 1 >= attempt.maxAttempts;
    const waited = attempt.waitedForTargetMs ?? 0;
    try {
      // Degradation: an optional task does not hold its job up waiting for a target.
      if (task.optional && isNoEligibleTarget(error) && waited >= this.deps.optionalTargetWaitMs) {
        return await this.skip(lease, `skipped: no model target could serve this optional task for ${Math.round(waited / 1000)} s: ${reason}`, routes, workflow, log);
      }
      // Fail closed and wait: no target may serve the call now (all down, or none local for
      // sensitive data), or the job's retry budget is spent and the trial call failed (a slow
      // moment of every target). A durable task waits for a target instead of failing; each
      // later run makes one trial call, so the waits bound the attempts.
      const waitsForTarget = isNoEligibleTarget(error) || isRetryBudgetSpent(error);
      if (waitsForTarget && waited < this.deps.maxTargetWaitMs) {
        await this.deps.tasks.releaseTask(lease, reason, routes, { countAsRetry: false });
        const event = isNoEligibleTarget(error) ? 'no eligible model target: task waits' : 'retry budget of the job spent: task waits for a trial call';
        log.warn({ err: reason, waited_ms: waited }, event);
        return { kind: 'waiting_for_target', taskId: lease.taskId, reason };
      }
      // A task that waited its limit while the budget was spent gives up: a retry would only wait again.
      if (shuttingDown || (isTransient(error) && !lastAttempt && !isRetryBudgetSpent(error))) {
        await this.deps.tasks.releaseTask(lease, reason, routes);
        log.warn({ err: reason, attempt: attempt.attemptsMade + 1, max_attempts: attempt.maxAttempts }, 'task attempt failed; will retry');
        return { kind: 'released', taskId: lease.taskId, error };
      }
      const waitedS = Math.round(waited / 1000);
      const finalReason = isNoEligibleTarget(error)
        ? `no model target could serve this task for ${waitedS} s: ${reason}`
        : isRetryBudgetSpent(error)
          ? `no trial call succeeded while the job's retry budget was spent; gave up after waiting ${waitedS} s (TARGET_WAIT_MAX_MS): ${reason}`
          : lastAttempt && isTransient(error)
            ? `gave up after ${attempt.maxAttempts} attempts: ${reason}`
            : reason;
      if (task.optional) return await this.skip(lease, `skipped: ${finalReason}`, routes, workflow, log);
      const { jobFailed } = await this.deps.tasks.failTask(lease, finalReason, routes);
      log.error({ err: finalReason, job_failed: jobFailed }, 'task failed');
      return { kind: 'failed', taskId: lease.taskId, reason: finalReason, jobFailed };
    } catch (writeError) {
      if (writeError instanceof LeaseLostError) {
        log.warn({ err: reason }, 'lease lost: stopping work on this task');
        return { kind: 'lease_lost', taskId: lease.taskId };
      }
      throw new Error(`could not record the failure of task ${lease.taskId} (${reason})`, { cause: writeError });
    }
  }

  private async skip(lease: Lease, reason: string, routes: RouteRecord[], workflow: CompiledWorkflow, log: Logger): Promise<RunOutcome> {
    const finished = await this.deps.tasks.skipTask(lease, reason, routes, (outcomes) => jobResultOf(workflow, outcomes));
    log.warn({ reason, job_completed: finished.jobCompleted }, 'optional task skipped');
    await this.enqueueReady(finished.ready, log);
    return { kind: 'skipped', taskId: lease.taskId, reason };
  }

}

/**
 * The for_each arrays of the job input that this agent's templates never read: a task reads the
 * input without them (a for_each task has its own item on its row), so 50 extract tasks do not
 * each read all 50 documents.
 */
export function inputArraysNotRead(workflow: CompiledWorkflow, agent: CompiledAgent): string[][] {
  const read = agent.steps
    .filter((step): step is CallStep => step.kind === 'call')
    .flatMap((step) => [...(step.system ? referencesOf(step.system) : []), ...referencesOf(step.user)])
    .flatMap(({ reference }) => (reference.kind === 'input' ? [reference.path] : []));
  const arrays = new Map<string, string[]>();
  for (const other of workflow.agents) if (other.forEach) arrays.set(other.forEach.path.join('.'), other.forEach.path);
  const overlaps = (a: readonly string[], b: readonly string[]) => a.slice(0, Math.min(a.length, b.length)).every((segment, i) => segment === b[i]);
  return [...arrays.values()].filter((path) => !read.some((ref) => overlaps(ref, path)));
}
