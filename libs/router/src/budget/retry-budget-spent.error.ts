import type { RouterFailureCode } from '@switchyard/contracts';
import { RouterCallError, type AttemptRecord } from '../calls/router-call.error';
import type { UpstreamErrorClass } from '../calls/upstream-error';

/** How a caller across a library boundary recognises `RetryBudgetSpentError`: by this `code`, not the class. */
export const RETRY_BUDGET_SPENT = 'retry_budget_spent' satisfies RouterFailureCode;

/**
 * The job's retry budget is spent and the call's attempts (or its one trial outside the
 * budget) failed. Not a failure of the work: the caller should wait with backoff and try
 * again (one trial per try), as it waits when no target is eligible.
 */
export class RetryBudgetSpentError extends RouterCallError {
  override readonly code: RouterFailureCode = RETRY_BUDGET_SPENT;
  /** The work may succeed later, after a wait; an immediate retry only adds to the storm. */
  readonly waitable = true;
  override readonly retryable = true;

  constructor(
    attempts: readonly AttemptRecord[],
    lastErrorClass: UpstreamErrorClass,
    readonly limit: number,
    jobId: string | undefined,
    options: { cause?: unknown; trial: boolean },
  ) {
    const scope = jobId === undefined ? '' : ` for job ${jobId}`;
    const spent = `the retry budget of ${limit} failed upstream attempts${scope} is spent`;
    super(attempts, lastErrorClass, { cause: options.cause, reason: options.trial ? `${spent}; its trial attempt outside the budget failed` : spent });
    this.name = 'RetryBudgetSpentError';
  }
}
