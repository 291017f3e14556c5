import type { StepContext } from './agent-definition';

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
