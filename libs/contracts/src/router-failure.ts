/**
 * How a router failure looks to code outside the router library (orchestration, the HTTP
 * layer): a stable `code` and whether trying again can help. Every error the router throws
 * from a call carries both, so nothing has to recognise the router's classes by name.
 */
export const ROUTER_FAILURE_CODES = ['no_eligible_target', 'retry_budget_spent', 'upstream_failed', 'call_aborted', 'context_length_exceeded'] as const;
export type RouterFailureCode = (typeof ROUTER_FAILURE_CODES)[number];

export interface RouterFailure {
  readonly code: RouterFailureCode;
  readonly retryable: boolean;
  readonly message: string;
}

const CODES: ReadonlySet<string> = new Set(ROUTER_FAILURE_CODES);

/** The router failure `error` is (an error, or the same shape as plain data), or undefined when it is something else. */
export function routerFailureOf(error: unknown): RouterFailure | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, retryable } = error as { code?: unknown; retryable?: unknown };
  if (typeof code !== 'string' || !CODES.has(code) || typeof retryable !== 'boolean') return undefined;
  return error as RouterFailure;
}
