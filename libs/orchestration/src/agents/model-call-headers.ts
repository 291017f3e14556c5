import { activeTraceId } from '@switchyard/observability';
import type { ModelCallContext } from './model-router.port';

/** The task and step a model call belongs to. */
export interface StepContext {
  task: { taskId: string; tenantId: string; jobId: string };
  step: number;
  signal: AbortSignal;
}

/**
 * Headers every model call of a step carries upstream: they let an idempotent upstream (and
 * the simulator's call log) tie a call to its task and step. The per-call idempotency key
 * is added by the call itself (see `modelCallKey`).
 */
export function modelCallHeaders(ctx: Pick<StepContext, 'task' | 'step'>): Record<string, string> {
  return {
    'x-switchyard-task': ctx.task.taskId,
    'x-switchyard-step': String(ctx.step),
  };
}

/**
 * The paid-once key of the n-th model call (1-based) of a task's step. The same on every
 * replay of the step, whichever worker or retry runs it: never the task's retry count.
 */
export function modelCallKey(taskId: string, step: number, call: number): string {
  return `${taskId}:${step}:${call}`;
}

export function modelCallContext(ctx: Pick<StepContext, 'task' | 'step'>): ModelCallContext {
  const traceId = activeTraceId();
  return { tenantId: ctx.task.tenantId, jobId: ctx.task.jobId, taskId: ctx.task.taskId, step: ctx.step, ...(traceId ? { traceId } : {}) };
}

/** What every model call of a step takes from the step: its number, upstream headers, ledger context and abort signal. */
export function stepCallFields(ctx: Pick<StepContext, 'task' | 'step' | 'signal'>): {
  step: number;
  headers: Record<string, string>;
  context: ModelCallContext;
  signal: AbortSignal;
} {
  return { step: ctx.step, headers: modelCallHeaders(ctx), context: modelCallContext(ctx), signal: ctx.signal };
}
