import { UnrecoverableError } from 'bullmq';
import { ZodError } from 'zod';
import { ValidationError, routerFailureOf } from '@switchyard/contracts';

/** Postgres error classes that mean "the server or connection went away", worth a retry. */
const TRANSIENT_PG_CODES = /^(08|53|57P0[1-3]|40001|40P01)/;
const SQLSTATE = /^[0-9A-Z]{5}$/;
const TRANSIENT_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether another attempt of the task could succeed. Errors that know say so with a
 * `retryable` flag (the router's); invalid data and explicit unrecoverables never retry.
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof UnrecoverableError || error instanceof ZodError || error instanceof ValidationError) return false;
  if (typeof error === 'object' && error !== null) {
    const { retryable, code } = error as { retryable?: unknown; code?: unknown };
    if (typeof retryable === 'boolean') return retryable;
    if (typeof code === 'string') {
      if (TRANSIENT_PG_CODES.test(code) || TRANSIENT_NODE_CODES.has(code)) return true;
      // Any other SQLSTATE (bad data, a constraint, a missing table) fails the same way again.
      if (SQLSTATE.test(code)) return false;
    }
  }
  // Unknown errors get the task's bounded retries: a checkpointed task loses little by trying again.
  return true;
}

export function describeError(error: unknown): string {
  if (error instanceof ZodError) return `invalid data: ${error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`;
  if (error instanceof Error) return `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}`.slice(0, 2_000);
  return String(error).slice(0, 2_000);
}

/** The router found no target that may serve the call (its public failure code, not its class). */
export function isNoEligibleTarget(error: unknown): boolean {
  return routerFailureOf(error)?.code === 'no_eligible_target';
}

/**
 * The job's retry budget is spent (the router's RetryBudgetSpentError, recognised by its
 * `code`): the task waits with backoff and tries one call again, it does not fail.
 */
export function isRetryBudgetSpent(error: unknown): boolean {
  return routerFailureOf(error)?.code === 'retry_budget_spent';
}
