import { RequestMetaSchema, routerFailureOf } from '@switchyard/contracts';
import { RetryBudgetSpentError } from '../budget/retry-budget-spent.error';
import { NoEligibleTargetError } from '../routing/no-eligible-target.error';
import { ContextWindowExceededError } from './context-window.error';
import { CallAbortedError, RouterCallError } from './router-call.error';

describe('router failures as the public RouterFailure shape', () => {
  it('every error a call throws carries its code and whether to retry, so no caller needs the class', () => {
    const meta = RequestMetaSchema.parse({});
    const failures = [
      new NoEligibleTargetError({ policy: 'local_first', candidates: [], matchedRules: [] }, meta),
      new RetryBudgetSpentError([], 'timeout', 12, 'job-1', { trial: false }),
      new RouterCallError([{ target: 'a', model: 'm', rule: 'r', outcome: 'error', errorClass: 'server', latencyMs: 1 }], 'server'),
      new CallAbortedError([]),
      new ContextWindowExceededError(10, [], 0.8),
    ];
    expect(failures.map((error) => [routerFailureOf(error)?.code, routerFailureOf(error)?.retryable])).toEqual([
      ['no_eligible_target', true],
      ['retry_budget_spent', true],
      ['upstream_failed', true],
      ['call_aborted', false],
      ['context_length_exceeded', false],
    ]);
  });

  it('anything else is no router failure', () => {
    expect(routerFailureOf(new Error('x'))).toBeUndefined();
    expect(routerFailureOf(Object.assign(new Error('x'), { code: 'ECONNRESET', retryable: true }))).toBeUndefined();
    expect(routerFailureOf({ code: 'no_eligible_target' })).toBeUndefined();
  });
});
