export interface TenantTaskError {
  code: string;
  message: string;
}

const PATTERNS: readonly [RegExp, (match: RegExpMatchArray) => TenantTaskError][] = [
  [/^cancelled by request$/, () => ({ code: 'cancelled', message: 'cancelled by request' })],
  [/^cancelled: another task of the job failed$/, () => ({ code: 'cancelled', message: 'cancelled: another task of the job failed' })],
  [/retry budget/, () => ({ code: 'retry_budget_exhausted', message: "the job's budget of model-call retries is spent" })],
  [/^abandoned: no heartbeat/, () => ({ code: 'worker_lost', message: "the task's worker stopped responding, and the task has no attempts left" })],
  [/^no model target could serve|NoEligibleTargetError/, () => ({ code: 'no_eligible_target', message: 'no model target could serve this task in time' })],
  [/ContextWindowExceededError/, () => ({ code: 'context_length_exceeded', message: "the task's input is too long for the models that may serve it" })],
  [/RouterCallError|model call failed/, () => ({ code: 'upstream_failed', message: 'the model calls of this task failed' })],
  [/^invalid data/, () => ({ code: 'invalid_data', message: "the task's data was not valid" })],
  [/^timeout: /, () => ({ code: 'timeout', message: 'the task ran longer than its time limit' })],
  // The plan's faults (a cycle, an unknown role) describe the model's reply, not our internals.
  [/^BadOutputError: .*? (?:is not a valid plan|are not valid plans) \((.*)\)/s, (m) => ({ code: 'bad_plan', message: `the planner's replies were not valid plans: ${(m[1] ?? '').slice(0, 500)}` })],
  [/BadOutputError/, () => ({ code: 'bad_output', message: "the model replies did not match the agent's declared output" })],
];

/**
 * A task's or job's failure as the tenant sees it: a stable code and a generic sentence.
 * The stored reason names targets, rules, workers and context windows; it stays in the
 * database for `/admin/tasks` and the logs. Pure.
 */
export function tenantTaskError(reason: string): TenantTaskError {
  // A job's own error points at the task that failed it: keep which task, explain it the same way.
  const jobFailure = /^task (\S{1,200}) failed: ([\s\S]*)$/.exec(reason);
  if (jobFailure) {
    const inner = tenantTaskError(jobFailure[2] ?? '');
    return { code: inner.code, message: `task ${jobFailure[1]} failed: ${inner.message}` };
  }
  // An optional task given up under degradation: say so, and why, the same way.
  const skipped = /^skipped: ([\s\S]*)$/.exec(reason);
  if (skipped) {
    const inner = tenantTaskError(skipped[1] ?? '');
    return { code: 'skipped', message: `optional task skipped: ${inner.message}` };
  }
  for (const [pattern, present] of PATTERNS) {
    const match = pattern.exec(reason);
    if (match) return present(match);
  }
  return { code: 'task_failed', message: 'the task failed' };
}
