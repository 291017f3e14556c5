import type { AgentRole, RouteRecord, TaskPayload } from '@switchyard/contracts';
import type { Logger } from '@switchyard/observability';
import { LeaseLostError, type Lease, type RoleDependencies, type StepCheckpoint, type TaskRepository, type TaskRow } from '@switchyard/state';
import type { AgentDefinition, FinalStepResult, RoleOutput, StepContext } from '../agents/agent-definition';
import { roleDependencies } from '../agents/agent-registry';
import type { ModelAttempt, ModelRouter } from '../agents/model-router.port';
import { routesFromAttempts } from '../agents/structured-summary';
import { describeError, isNoEligibleTarget, isRetryBudgetSpent, isTransient } from './failure';

export interface TaskRunnerDeps {
  tasks: TaskRepository;
  router: ModelRouter;
  agents: ReadonlyMap<AgentRole, AgentDefinition>;
  workerId: string;
  logger: Logger;
  heartbeatMs: number;
  /**
   * How long a task may wait for a model target before it fails: for an eligible one (all
   * down), or for one that answers its trial call while the job's retry budget is spent.
   */
  maxTargetWaitMs: number;
  now?: () => Date;
}

export interface AttemptInfo {
  /** Attempts that already failed before this one. */
  attemptsMade: number;
  maxAttempts: number;
  /** How long the task has already waited for a model target, in ms (since its first wait). */
  waitedForTargetMs?: number;
}

export type RunOutcome =
  | { kind: 'completed'; taskId: string }
  | { kind: 'already_done'; taskId: string }
  /**
   * Not runnable now: another worker holds it (a duplicate delivery), or, with
   * `waitingFor: 'dependencies'`, the tasks it fans in from (every extract of the job) have
   * not all finished yet.
   */
  | { kind: 'busy'; taskId: string; waitingFor?: 'owner' | 'dependencies' }
  | { kind: 'not_runnable'; taskId: string; status: string }
  | { kind: 'lease_lost'; taskId: string }
  | { kind: 'released'; taskId: string; error: unknown }
  | { kind: 'waiting_for_target'; taskId: string; reason: string }
  | { kind: 'failed'; taskId: string; reason: string; jobFailed: boolean };

class LeaseLostSignal extends Error {}

/** A failed model call reports its upstream attempts (the router's errors carry them): keep them on the task. */
function routesOfFailedCall(error: unknown, step: number): RouteRecord[] {
  const attempts = (error as { attempts?: unknown } | null)?.attempts;
  return Array.isArray(attempts) ? routesFromAttempts(step, attempts as ModelAttempt[]) : [];
}

/** The router as a task's steps see it: every call carries the job's size, which sizes the job's retry budget. */
function withJobTaskCount(router: ModelRouter, jobTaskCount: number | undefined): ModelRouter {
  if (jobTaskCount === undefined) return router;
  return {
    chat: (request) => router.chat(request.context === undefined ? request : { ...request, context: { ...request.context, jobTaskCount } }),
    reportBadOutput: (target) => router.reportBadOutput?.(target),
  };
}

/**
 * Runs one task: claims its lease, resumes at its checkpointed step, runs the remaining
 * steps with a checkpoint after each, and records the outcome. Every write presents the
 * lease, so a worker that lost its task can no longer change it.
 */
export class TaskRunner {
  private readonly now: () => Date;
  private readonly dependencies: RoleDependencies;

  constructor(private readonly deps: TaskRunnerDeps) {
    this.now = deps.now ?? (() => new Date());
    this.dependencies = roleDependencies(deps.agents);
  }

  async run(payload: TaskPayload, attempt: AttemptInfo, shutdown: AbortSignal): Promise<RunOutcome> {
    const { tasks, workerId } = this.deps;
    const claim = await tasks.claimTask(payload.task_id, workerId, this.dependencies);
    if (!claim.claimed) {
      if (claim.reason === 'already_running') return { kind: 'busy', taskId: payload.task_id, waitingFor: 'owner' };
      if (claim.reason === 'blocked') return { kind: 'busy', taskId: payload.task_id, waitingFor: 'dependencies' };
      if (claim.status === 'success') return { kind: 'already_done', taskId: payload.task_id };
      return { kind: 'not_runnable', taskId: payload.task_id, status: claim.status ?? 'missing' };
    }
    const { task, lease } = claim;
    const log = this.deps.logger.child({ job_id: task.jobId, task_id: task.taskId, role: task.role, lease_version: lease.version });
    const agent = this.deps.agents.get(task.role as AgentRole);
    if (!agent) {
      const reason = `no agent handles role "${task.role}"`;
      const { jobFailed } = await tasks.failTask(lease, reason, []);
      return { kind: 'failed', taskId: task.taskId, reason, jobFailed };
    }

    const stop = new AbortController();
    const onShutdown = () => stop.abort(shutdown.reason);
    shutdown.addEventListener('abort', onShutdown, { once: true });
    const heartbeat = this.startHeartbeat(lease, stop, log);
    const progress = { step: task.currentStep };
    try {
      log.info({ step: task.currentStep, total_steps: task.totalSteps, attempt: attempt.attemptsMade + 1 }, 'task started');
      await this.runSteps(agent, task, lease, stop.signal, progress);
      log.info('task completed');
      return { kind: 'completed', taskId: task.taskId };
    } catch (error) {
      if (error instanceof LeaseLostError || stop.signal.reason instanceof LeaseLostSignal) {
        log.warn({ err: describeError(error) }, 'lease lost: stopping work on this task');
        return { kind: 'lease_lost', taskId: task.taskId };
      }
      return await this.recordFailure(error, lease, attempt, shutdown.aborted, routesOfFailedCall(error, progress.step), log);
    } finally {
      clearInterval(heartbeat);
      shutdown.removeEventListener('abort', onShutdown);
    }
  }

  private async runSteps(agent: AgentDefinition, task: TaskRow, lease: Lease, signal: AbortSignal, progress: { step: number }): Promise<void> {
    const previous = new Map<string, unknown>(task.stepCheckpoints.map((c) => [c.name, c.summary]));
    const last = agent.steps.length - 1;
    const router = withJobTaskCount(this.deps.router, await this.jobTaskCount(task.jobId));
    for (let step = task.currentStep; step <= last; step += 1) {
      progress.step = step;
      signal.throwIfAborted();
      const definition = agent.steps[step]!;
      const ctx: StepContext = {
        task,
        previous,
        step,
        router,
        signal,
        readRole: (role) => this.readRole(task.jobId, role),
      };
      const result = await definition.run(ctx);
      const checkpoint: StepCheckpoint = { step, name: definition.name, summary: result.summary, completed_at: this.now().toISOString() };
      const routes = result.routes ?? [];
      if (step < last) {
        await this.deps.tasks.checkpoint(lease, checkpoint, routes, result.costUsd ?? 0);
        previous.set(definition.name, result.summary);
        this.deps.logger.debug({ task_id: task.taskId, step, name: definition.name }, 'step checkpointed');
      } else {
        const final = result as FinalStepResult;
        await this.deps.tasks.completeTask(lease, checkpoint, final.output, routes, result.costUsd ?? 0, final.jobResult);
      }
    }
  }

  /** The job's size, for its retry budget. */
  private async jobTaskCount(jobId: string): Promise<number | undefined> {
    return (await this.deps.tasks.summarizeJobs([jobId])).get(jobId)?.total;
  }

  private async readRole(jobId: string, role: AgentRole): Promise<RoleOutput[]> {
    const rows = await this.deps.tasks.findTasksOfRole(jobId, role);
    return rows.map((row) => ({
      taskId: row.taskId,
      agentId: row.agentId,
      status: row.status,
      input: row.inputSummary,
      output: (row.outputSummary as Record<string, unknown> | null) ?? null,
    }));
  }

  private async recordFailure(
    error: unknown,
    lease: Lease,
    attempt: AttemptInfo,
    shuttingDown: boolean,
    routes: RouteRecord[],
    log: Logger,
  ): Promise<RunOutcome> {
    const reason = describeError(error);
    const lastAttempt = attempt.attemptsMade + 1 >= attempt.maxAttempts;
    try {
      // Fail closed and wait: no target may serve the call now (all down, or none local for
      // sensitive data), or the job's retry budget is spent and the trial call failed (a slow
      // moment of every target). A durable task waits for a target instead of failing; each
      // later run makes one trial call, so the waits bound the attempts.
      const waitsForTarget = isNoEligibleTarget(error) || isRetryBudgetSpent(error);
      if (waitsForTarget && (attempt.waitedForTargetMs ?? 0) < this.deps.maxTargetWaitMs) {
        await this.deps.tasks.releaseTask(lease, reason, routes, { countAsRetry: false });
        const event = isNoEligibleTarget(error) ? 'no eligible model target: task waits' : 'retry budget of the job spent: task waits for a trial call';
        log.warn({ err: reason, waited_ms: attempt.waitedForTargetMs ?? 0 }, event);
        return { kind: 'waiting_for_target', taskId: lease.taskId, reason };
      }
      // A task that waited its limit while the budget was spent gives up: a retry would only wait again.
      if (shuttingDown || (isTransient(error) && !lastAttempt && !isRetryBudgetSpent(error))) {
        await this.deps.tasks.releaseTask(lease, reason, routes);
        log.warn({ err: reason, attempt: attempt.attemptsMade + 1, max_attempts: attempt.maxAttempts }, 'task attempt failed; will retry');
        return { kind: 'released', taskId: lease.taskId, error };
      }
      const waitedS = Math.round((attempt.waitedForTargetMs ?? 0) / 1000);
      const finalReason = isNoEligibleTarget(error)
        ? `no model target could serve this task for ${waitedS} s: ${reason}`
        : isRetryBudgetSpent(error)
          ? `no trial call succeeded while the job's retry budget was spent; gave up after waiting ${waitedS} s (TARGET_WAIT_MAX_MS): ${reason}`
          : lastAttempt && isTransient(error)
          ? `gave up after ${attempt.maxAttempts} attempts: ${reason}`
          : reason;
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

  private startHeartbeat(lease: Lease, stop: AbortController, log: Logger): NodeJS.Timeout {
    const timer = setInterval(() => {
      this.deps.tasks.heartbeat(lease).then(
        (held) => {
          if (!held && !stop.signal.aborted) stop.abort(new LeaseLostSignal(`lease of task ${lease.taskId} lost`));
        },
        // A missed heartbeat (database briefly away) is not a lost lease; the next one may land.
        (error: unknown) => log.warn({ err: describeError(error) }, 'heartbeat write failed'),
      );
    }, this.deps.heartbeatMs);
    timer.unref();
    return timer;
  }
}
