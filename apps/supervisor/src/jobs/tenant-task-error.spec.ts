import type { TaskView } from '@switchyard/state';
import { presentJob } from './job.presenter';
import { tenantTaskError } from './tenant-task-error';

const internals = /local_vllm|cloud_main|doomed|rule|policy|window|sensitive_data|\d{3,}/;

describe('tenantTaskError', () => {
  it.each([
    ['gave up after 3 attempts: RouterCallError: model call failed after 2 attempts (local_vllm_7b timeout, cloud_main server_error 500)', 'upstream_failed'],
    [
      'RouterCallError: model call failed after 7 attempts (local_vllm_7b rate_limited 429); the retry budget of 6 failed upstream attempts for job 1b7c is spent',
      'retry_budget_exhausted',
    ],
    ['abandoned: no heartbeat from doomed-worker for 31 s on attempt 3 of 3; retry limit reached', 'worker_lost'],
    [
      'no model target could serve this task for 600 s: NoEligibleTargetError: no eligible target for task_type=extract (policy local_first); matched rules: sensitive_data; dropped: local_vllm_7b via sensitive_data: drained',
      'no_eligible_target',
    ],
    ['ContextWindowExceededError: request too large: about 90000 input tokens, but local_vllm_7b 32768 (limit 29491)', 'context_length_exceeded'],
    ['invalid data: documents.0: Required', 'invalid_data'],
    ['timeout: the task ran longer than its 90 s', 'timeout'],
    ['BadOutputError: triage: replies of local_vllm_7b and cloud_main do not match the declared output (severity: invalid)', 'bad_output'],
    ['skipped: no model target could serve this optional task for 5 s: NoEligibleTargetError: no eligible target (policy local_first)', 'skipped'],
    ['TypeError: cannot read properties of undefined (reading local_vllm_7b)', 'task_failed'],
  ])('gives a stable code and a message without internals for %j', (reason, code) => {
    const error = tenantTaskError(reason);
    expect(error.code).toBe(code);
    expect(error.message).not.toMatch(internals);
  });

  it('says why a goal job had no plan, without the targets that gave the bad ones', () => {
    expect(tenantTaskError('task planner failed: BadOutputError: planner: the replies of local_vllm_7b and cloud_main are not valid plans (dependency cycle: a → b → a)')).toEqual({
      code: 'bad_plan',
      message: "task planner failed: the planner's replies were not valid plans: dependency cycle: a → b → a",
    });
  });

  it("keeps which task failed a job, and the user's own cancellations", () => {
    expect(tenantTaskError('task extract-2 failed: abandoned: no heartbeat from doomed for 31 s on attempt 3 of 3; retry limit reached')).toEqual({
      code: 'worker_lost',
      message: "task extract-2 failed: the task's worker stopped responding, and the task has no attempts left",
    });
    expect(tenantTaskError('cancelled by request')).toEqual({ code: 'cancelled', message: 'cancelled by request' });
    expect(tenantTaskError('cancelled: another task of the job failed').code).toBe('cancelled');
  });
});

describe('presentJob', () => {
  it("shows the tenant a failed job's and task's error as a code and a generic message, not the stored reason", () => {
    const base = {
      tenantId: 'acme',
      jobType: 'doc_review',
      agentId: 'job',
      role: 'job',
      optional: false,
      currentStep: 0,
      totalSteps: 0,
      retryCount: 0,
      routeTargets: [],
      outputSummary: null,
      costUsd: 0,
      createdAt: new Date('2026-01-01T00:00:00Z'),
      updatedAt: new Date('2026-01-01T00:00:00Z'),
    };
    const reason = 'no model target could serve this task for 600 s: NoEligibleTargetError: no eligible target (policy local_first); dropped: local_vllm_7b via sensitive_data: drained';
    const rows = [
      { ...base, taskId: 'job-1', parentTaskId: null, status: 'failed', error: `task extract-1 failed: ${reason}` },
      { ...base, taskId: 'task-1', parentTaskId: 'job-1', agentId: 'extract-1', role: 'extract', status: 'failed', error: reason },
    ] as unknown as TaskView[];
    const job = presentJob(rows);
    expect(job.error).toEqual({ code: 'no_eligible_target', message: 'task extract-1 failed: no model target could serve this task in time' });
    expect(job.tasks[0]?.error).toEqual({ code: 'no_eligible_target', message: 'no model target could serve this task in time' });
    expect(JSON.stringify(job)).not.toMatch(/local_vllm|sensitive_data|policy/);
  });
});
