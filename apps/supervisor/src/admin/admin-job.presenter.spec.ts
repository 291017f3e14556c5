import type { AdminTaskView, JobAttempt } from '@switchyard/state';
import { presentAdminJob } from './admin-job.presenter';

const at = (seconds: number) => new Date(Date.UTC(2030, 0, 1, 12, 0, seconds));
const JOB = '00000000-0000-4000-8000-000000000001';
const EXTRACT = '00000000-0000-4000-8000-000000000002';
const SYNTH = '00000000-0000-4000-8000-000000000003';

function row(taskId: string, overrides: Partial<AdminTaskView> = {}): AdminTaskView {
  return {
    taskId,
    parentTaskId: taskId === JOB ? null : JOB,
    jobId: JOB,
    tenantId: 'acme',
    jobType: 'doc_review',
    agentId: taskId === JOB ? 'supervisor' : 'agent',
    role: taskId === JOB ? 'job' : 'extract',
    status: 'success',
    optional: false,
    outputSummary: null,
    currentStep: 2,
    totalSteps: 2,
    retryCount: 0,
    routeTargets: [],
    costUsd: 0.001,
    error: null,
    createdAt: at(0),
    updatedAt: at(9),
    startedAt: at(1),
    finishedAt: at(9),
    steps: [],
    ...overrides,
  } as AdminTaskView;
}

const attempt = (taskId: string, traceId: string | null, outcome = 'ok'): JobAttempt => ({
  taskId,
  step: 1,
  at: at(2),
  target: 'local_vllm_7b',
  targetType: 'local',
  model: 'qwen',
  rule: 'fallback',
  outcome,
  errorClass: outcome === 'ok' ? null : 'timeout',
  latencyMs: 123.456,
  costUsd: 0.0005,
  traceId,
});

describe('presentAdminJob', () => {
  it("gives each task its steps, its own attempts and its duration, and the job its tenant and distinct trace ids", () => {
    const job = presentAdminJob(
      [row(JOB, { startedAt: at(0), finishedAt: at(10) }), row(EXTRACT, { steps: [{ step: 1, name: 'prepare', completed_at: at(3).toISOString() }] }), row(SYNTH, { startedAt: null, finishedAt: null, status: 'pending' })],
      [attempt(EXTRACT, 'trace-a', 'error'), attempt(EXTRACT, 'trace-a'), attempt(SYNTH, 'trace-b'), attempt(SYNTH, null)],
    );
    expect(job).toMatchObject({ job_id: JOB, tenant_id: 'acme', trace_ids: ['trace-a', 'trace-b'], duration_ms: 10_000 });
    const [extract, synth] = job.tasks;
    expect(extract).toMatchObject({ task_id: EXTRACT, duration_ms: 8_000, steps: [{ step: 1, name: 'prepare' }] });
    expect(extract!.attempts.map((a) => [a.outcome, a.error_class, a.latency_ms])).toEqual([
      ['error', 'timeout', 123.5],
      ['ok', null, 123.5],
    ]);
    expect(synth).toMatchObject({ task_id: SYNTH, duration_ms: null, started_at: null });
    expect(synth!.attempts).toHaveLength(2);
  });
});
