import { inSpan } from '@switchyard/observability';
import type { ModelRouter } from './model-router.port';

/**
 * Each model call as a span: the parent of its routing decisions (span events) and of one
 * span per upstream attempt, with the call's outcome (target, rule, attempts, cost) on it.
 */
export function tracedModelRouter(router: ModelRouter): ModelRouter {
  return {
    chat: (request) =>
      inSpan(
        `model call ${request.meta.task_type}`,
        {
          'switchyard.task_type': request.meta.task_type,
          'switchyard.sensitivity': request.meta.sensitivity,
          ...(request.context ? { 'switchyard.step': request.context.step } : {}),
        },
        async (span) => {
          const result = await router.chat(request);
          span.setAttributes({
            'switchyard.target': result.target,
            'switchyard.rule': result.rule,
            'switchyard.attempts': result.attempts.length,
            'switchyard.cost_usd': result.costUsd,
            'switchyard.reused': result.reused === true,
          });
          return result;
        },
      ),
    reportBadOutput: (target) => router.reportBadOutput?.(target),
  };
}
