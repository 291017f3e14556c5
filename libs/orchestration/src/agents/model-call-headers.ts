import { activeTraceId } from '@switchyard/observability';
import type { StepContext } from './agent-definition';
import type { ModelCallContext } from './model-router.port';

/**
 * Headers every model call of a step carries upstream: they let an idempotent upstream (and
 * the simulator's call log) tie a call to its task and step.
 */
export function modelCallHeaders(ctx: Pick<StepContext, 'task' | 'step'>): Record<string, string> {
  return {
    'x-switchyard-task': ctx.task.taskId,
    'x-switchyard-step': String(ctx.step),
    'x-switchyard-idempotency-key': `${ctx.task.taskId}:${ctx.step}:${ctx.task.retryCount}`,
  };
}

export function modelCallContext(ctx: Pick<StepContext, 'task' | 'step'>): ModelCallContext {
  const traceId = activeTraceId();
  return { tenantId: ctx.task.tenantId, jobId: ctx.task.jobId, taskId: ctx.task.taskId, step: ctx.step, ...(traceId ? { traceId } : {}) };
}
