import type { RequestMeta, RouterFailure } from '@switchyard/contracts';
import type { RoutingExplanation } from './routing-decision';

/**
 * No target may serve the request right now. Retryable: a durable job can wait for a
 * target to come back (SPEC §3.12).
 */
export class NoEligibleTargetError extends Error implements RouterFailure {
  readonly code = 'no_eligible_target' as const;
  readonly retryable = true;

  constructor(
    readonly explanation: RoutingExplanation,
    readonly meta: Pick<RequestMeta, 'task_type' | 'complexity' | 'sensitivity' | 'priority'>,
  ) {
    super(describe(explanation, meta));
    this.name = 'NoEligibleTargetError';
  }
}

function describe(explanation: RoutingExplanation, meta: NoEligibleTargetError['meta']): string {
  const request = `task_type=${meta.task_type} complexity=${meta.complexity} sensitivity=${meta.sensitivity} priority=${meta.priority}`;
  const rules = explanation.matchedRules.length > 0 ? explanation.matchedRules.join(', ') : '(none)';
  const dropped =
    explanation.candidates.length > 0
      ? explanation.candidates.map((candidate) => `${candidate.target} via ${candidate.rule}: ${candidate.reason ?? 'eligible'}`).join('; ')
      : '(no candidates)';
  const sensitive = meta.sensitivity === 'sensitive' ? '; sensitive requests are never sent anywhere but local targets' : '';
  return `no eligible target for ${request} (policy ${explanation.policy}); matched rules: ${rules}; dropped: ${dropped}${sensitive}`;
}
