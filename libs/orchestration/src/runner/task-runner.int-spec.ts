/**
 * TaskRunner against a real Postgres (fresh database, real migrations) with the paid-once
 * store; the model router is a counting stub at the port. Covers: a crash between a model
 * answer and its checkpoint replays the step without paying again; heartbeats continue
 * during a long model call; losing the lease mid-call stops the work.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import type { TaskPayload } from '@switchyard/contracts';
import { createLogger } from '@switchyard/observability';
import { JobRepository, ModelCallResultRepository, TaskLeaseRepository, TaskRecoveryRepository, type StepCheckpoint } from '@switchyard/state';
import { createTestDatabase, type TestDatabase } from '@switchyard/state/testing/test-database';
import { RetryBudgetSpentError } from '@switchyard/router';
import { compileWorkflow, loadWorkflowsDir, type WorkflowDefinition } from '@switchyard/workflows';
import { IdempotentModelRouter } from '../agents/idempotent-model-router';
import type { ModelChatRequest, ModelChatResult, ModelRouter } from '../agents/model-router.port';
import { parseWorkflowSubmission, planWorkflowJob } from '../planning/workflow-planner';
import type { QueuedTask } from '../queues/task-queues';
import { WorkflowVersions } from '../workflows/workflow-versions';
import { TaskRunner } from './task-runner';

const { workflows } = loadWorkflowsDir(join(__dirname, '../../../../config/workflows'));

const ANSWER = JSON.stringify({ conclusion: 'Due in 30 days.', evidence: ['30 days'], confidence: 0.9 });

class CountingRouter implements ModelRouter {
  readonly requests: ModelChatRequest[] = [];
  constructor(private readonly before: (request: ModelChatRequest) => Promise<void> = async () => undefined) {}
  async chat(request: ModelChatRequest): Promise<ModelChatResult> {
    this.requests.push(request);
    await this.before(request);
    return {
      content: ANSWER,
      target: 'local_vllm_7b',
      model: 'qwen2.5-7b-instruct',
      rule: 'fallback',
      usage: { inputTokens: 100, outputTokens: 20 },
      latencyMs: 5,
      costUsd: 0.001,
      attempts: [{ target: 'local_vllm_7b', model: 'qwen2.5-7b-instruct', rule: 'fallback', outcome: 'ok', latencyMs: 5 }],
    };
  }
}

/** A repository whose next completeTask dies as a dropped connection would: the answer is in, the checkpoint is not. */
class CrashingTaskRepository extends TaskLeaseRepository {
  crashes = 1;
  override async completeTask(...args: Parameters<TaskLeaseRepository['completeTask']>): ReturnType<TaskLeaseRepository['completeTask']> {
    if (this.crashes > 0) {
      this.crashes -= 1;
      throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    }
    return super.completeTask(...args);
  }
}

let database: TestDatabase;
const logger = createLogger('task-runner-int', 'silent');

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.destroy();
});

async function submitOneDocument(): Promise<{ extract: TaskPayload }> {
  const { workflow, submission } = parseWorkflowSubmission(
    { type: 'doc_review', input: { question: 'When is payment due?', documents: [{ id: 'a', text: 'Payment is due in 30 days.' }] } },
    workflows,
  );
  const plan = planWorkflowJob(workflow, submission, { tenantId: 'acme', newId: randomUUID, trace: {} });
  await new JobRepository(database.db).createJob(plan.root, plan.tasks);
  const extract = plan.tasks.find((t) => t.role === 'extract')!;
  return { extract: { tenant_id: 'acme', job_id: plan.jobId, task_id: extract.taskId, trace: {} } };
}

function runner(tasks: TaskLeaseRepository, router: ModelRouter, heartbeatMs = 1_000, maxTargetWaitMs = 60_000, enqueued: QueuedTask[] = []) {
  return new TaskRunner({
    tasks,
    router: new IdempotentModelRouter(router, new ModelCallResultRepository(database.db)),
    versions: new WorkflowVersions(),
    enqueue: async (ready) => {
      enqueued.push(...ready);
    },
    workerId: `worker-${randomUUID().slice(0, 6)}`,
    logger,
    heartbeatMs,
    maxTargetWaitMs,
    optionalTargetWaitMs: 5_000,
  });
}

const attempt = { attemptsMade: 0, maxAttempts: 3 };

describe('TaskRunner recovery (Postgres)', () => {
  it('replays a step whose checkpoint was lost after the model answered, reusing the stored answer', async () => {
    const { extract } = await submitOneDocument();
    const router = new CountingRouter();
    const tasks = new CrashingTaskRepository(database.db);

    const first = await runner(tasks, router).run(extract, attempt, new AbortController().signal);
    expect(first.kind).toBe('released');
    const afterCrash = (await tasks.findTask(extract.task_id))!;
    expect(afterCrash).toMatchObject({ status: 'pending', currentStep: 1, retryCount: 1 });

    const second = await runner(tasks, router).run(extract, { ...attempt, attemptsMade: 1 }, new AbortController().signal);
    expect(second.kind).toBe('completed');
    // One upstream call for the step, though the step ran twice: the first run (first lease)
    // stored its answer without a lookup, the second (a later lease) looked and found it.
    expect(router.requests).toHaveLength(1);
    expect(router.requests[0]!.idempotencyKey).toBe(`${extract.task_id}:1:1`);
    expect(router.requests[0]!.context).toMatchObject({ firstLease: true });
    const done = (await tasks.findTask(extract.task_id))!;
    expect(done.status).toBe('success');
    expect(done.stepCheckpoints.map((c: StepCheckpoint) => c.step)).toEqual([0, 1]);
    expect(done.outputSummary).toMatchObject({ conclusion: 'Due in 30 days.' });
    const stored = await new ModelCallResultRepository(database.db).find(`${extract.task_id}:1:1`);
    expect(stored).toMatchObject({ taskId: extract.task_id, content: ANSWER, target: 'local_vllm_7b' });
  });

  it('keeps heartbeating during a long model call', async () => {
    const { extract } = await submitOneDocument();
    const tasks = new TaskLeaseRepository(database.db);
    const heartbeats: Date[] = [];
    const router = new CountingRouter(async () => {
      // Hold the call until two heartbeats have moved updated_at on the task.
      const deadline = Date.now() + 10_000;
      while (heartbeats.length < 3 && Date.now() < deadline) {
        const row = (await tasks.findTask(extract.task_id))!;
        if (!heartbeats.some((h) => h.getTime() === row.updatedAt.getTime())) heartbeats.push(row.updatedAt);
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    const outcome = await runner(tasks, router, 50).run(extract, attempt, new AbortController().signal);
    expect(outcome.kind).toBe('completed');
    expect(heartbeats.length).toBeGreaterThanOrEqual(3);
  });

  it('stops a long model call when the lease is taken over, and writes nothing after', async () => {
    const { extract } = await submitOneDocument();
    const tasks = new TaskLeaseRepository(database.db);
    let aborted = false;
    const router = new CountingRouter(async (request) => {
      // Presumed dead: the sweeper takes the task over while the call runs.
      await database.db.execute(sql`update agent_task_state set updated_at = now() - interval '1 minute' where task_id = ${extract.task_id}::uuid`);
      await new TaskRecoveryRepository(database.db).sweepStale({ sweeperId: 'sweeper:test', staleAfterMs: 1_000, limit: 10, decide: () => ({ action: 'requeue' }) });
      await new Promise<void>((resolve) => {
        if (request.signal?.aborted) resolve();
        request.signal?.addEventListener('abort', () => resolve(), { once: true });
      });
      aborted = true;
      throw request.signal?.reason ?? new Error('aborted');
    });
    const outcome = await runner(tasks, router, 50).run(extract, attempt, new AbortController().signal);
    expect(outcome.kind).toBe('lease_lost');
    expect(aborted).toBe(true);
    // The sweeper's state stands: the old owner wrote nothing after losing the lease.
    const row = (await tasks.findTask(extract.task_id))!;
    expect(row).toMatchObject({ status: 'pending', leaseOwner: 'sweeper:test', retryCount: 1, currentStep: 1, leaseVersion: 2 });
    expect(row.stepCheckpoints.map((c: StepCheckpoint) => c.step)).toEqual([0]);
  });

  it('runs a task once when its queue job is delivered twice at the same time: the lease decides', async () => {
    const { extract } = await submitOneDocument();
    const tasks = new TaskLeaseRepository(database.db);
    const router = new CountingRouter(async () => new Promise((r) => setTimeout(r, 200)));
    const outcomes = await Promise.all([
      runner(tasks, router).run(extract, attempt, new AbortController().signal),
      runner(tasks, router).run(extract, attempt, new AbortController().signal),
    ]);
    expect(outcomes.map((o) => o.kind).sort()).toEqual(['busy', 'completed']);
    expect(outcomes.find((o) => o.kind === 'busy')).toMatchObject({ waitingFor: 'owner' });
    expect(router.requests).toHaveLength(1);
    // A late duplicate finds the task done.
    expect((await runner(tasks, router).run(extract, attempt, new AbortController().signal)).kind).toBe('already_done');
  });
});

describe('TaskRunner degradation and timeouts (Postgres)', () => {
  /** Declared in TypeScript: `probe` may be skipped, `report` runs after it either way. */
  const definition: WorkflowDefinition = {
    type: 'probe_then_report',
    input: { type: 'object', required: ['subject'], properties: { subject: { type: 'string' } } },
    agents: [
      { role: 'probe', optional: true, timeout_ms: 1_000, meta: { task_type: 'classify', complexity: 'low' }, prompt: { user: 'Probe {{input.subject}}' } },
      { role: 'report', after: ['probe'], timeout_ms: 1_000, meta: { task_type: 'summarize' }, prompt: { user: 'Report: {{summaries.probe}}' } },
    ],
    result: 'report',
  };
  const workflow = compileWorkflow(definition, 'task-runner.int-spec');

  async function submitProbe() {
    const plan = planWorkflowJob(workflow, { type: workflow.type, input: { subject: 'disk' }, meta: { sensitivity: 'internal', priority: 'normal', tags: [] } }, { tenantId: 'acme', newId: randomUUID, trace: {} });
    await new JobRepository(database.db).createJob(plan.root, plan.tasks);
    const payload = (role: string): TaskPayload => ({ tenant_id: 'acme', job_id: plan.jobId, task_id: plan.tasks.find((t) => t.role === role)!.taskId, trace: {} });
    return { jobId: plan.jobId, probe: payload('probe'), report: payload('report') };
  }

  /** Never answers: holds the call until the task's signal aborts it. */
  const hangingRouter = new CountingRouter(
    (request) =>
      new Promise<void>((_, reject) => {
        request.signal?.addEventListener('abort', () => reject(request.signal?.reason ?? new Error('aborted')), { once: true });
      }),
  );
  const noTarget = new CountingRouter(async () => {
    throw Object.assign(new Error('no eligible target for task_type=classify'), { name: 'NoEligibleTargetError', code: 'no_eligible_target', retryable: true });
  });

  it('skips an optional task that runs past its timeout_ms and releases the task after it', async () => {
    const job = await submitProbe();
    const tasks = new TaskLeaseRepository(database.db);
    const enqueued: QueuedTask[] = [];
    const outcome = await runner(tasks, hangingRouter, 1_000, 60_000, enqueued).run(job.probe, attempt, new AbortController().signal);
    expect(outcome).toMatchObject({ kind: 'skipped', reason: expect.stringMatching(/^skipped: timeout: /) });
    expect((await tasks.findTask(job.probe.task_id))!).toMatchObject({ status: 'skipped', error: expect.stringMatching(/timeout/) });
    expect(enqueued.map((t) => t.taskId)).toEqual([job.report.task_id]);
  });

  it('fails a required task that runs past its timeout_ms with reason timeout, and its job', async () => {
    const job = await submitProbe();
    const tasks = new TaskLeaseRepository(database.db);
    await runner(tasks, new CountingRouter(), 1_000).run(job.probe, attempt, new AbortController().signal);
    const outcome = await runner(tasks, hangingRouter, 1_000).run(job.report, attempt, new AbortController().signal);
    expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/^timeout: /), jobFailed: true });
    expect((await tasks.findTask(job.jobId))!.status).toBe('failed');
  });

  it('lets an optional task wait for a target for OPTIONAL_TARGET_WAIT_MS, then skips it; the job completes without it', async () => {
    const job = await submitProbe();
    const tasks = new TaskLeaseRepository(database.db);
    const enqueued: QueuedTask[] = [];
    const waiting = await runner(tasks, noTarget, 1_000, 60_000, enqueued).run(job.probe, { ...attempt, waitedForTargetMs: 1_000 }, new AbortController().signal);
    expect(waiting.kind).toBe('waiting_for_target');
    const skipped = await runner(tasks, noTarget, 1_000, 60_000, enqueued).run(job.probe, { ...attempt, waitedForTargetMs: 5_000 }, new AbortController().signal);
    expect(skipped).toMatchObject({ kind: 'skipped', reason: expect.stringMatching(/^skipped: no model target could serve this optional task for 5 s/) });
    expect(enqueued.map((t) => t.taskId)).toEqual([job.report.task_id]);

    expect((await runner(tasks, new CountingRouter(), 1_000).run(job.report, attempt, new AbortController().signal)).kind).toBe('completed');
    const root = (await tasks.findTask(job.jobId))!;
    expect(root.status).toBe('success');
    expect(root.outputSummary).toMatchObject({ conclusion: 'Due in 30 days.' });
  });
});

describe('TaskRunner and a spent retry budget (Postgres)', () => {
  const budgetSpent = () =>
    new RetryBudgetSpentError([{ target: 'local_vllm_7b', model: 'm', rule: 'fallback', outcome: 'error', errorClass: 'timeout', latencyMs: 1_000 }], 'timeout', 14, 'job', {
      trial: true,
    });

  it('tells the router how many tasks the job has, which sizes its retry budget', async () => {
    const { extract } = await submitOneDocument();
    const router = new CountingRouter();
    expect((await runner(new TaskLeaseRepository(database.db), router).run(extract, attempt, new AbortController().signal)).kind).toBe('completed');
    // One extract and one synthesize.
    expect(router.requests[0]!.context).toMatchObject({ jobId: extract.job_id, taskId: extract.task_id, jobTaskCount: 2 });
  });

  it('waits (released, no attempt spent) when the budget is spent, goes on when a later trial call answers', async () => {
    const { extract } = await submitOneDocument();
    const tasks = new TaskLeaseRepository(database.db);
    let spent = true;
    const router = new CountingRouter(async () => {
      if (spent) throw budgetSpent();
    });
    const waiting = await runner(tasks, router).run(extract, attempt, new AbortController().signal);
    expect(waiting).toMatchObject({ kind: 'waiting_for_target', reason: expect.stringMatching(/retry budget of 14 .* is spent/) });
    expect(await tasks.findTask(extract.task_id)).toMatchObject({ status: 'pending', retryCount: 0 });

    spent = false;
    const later = await runner(tasks, router).run(extract, { ...attempt, waitedForTargetMs: 3_000 }, new AbortController().signal);
    expect(later.kind).toBe('completed');
    expect(router.requests).toHaveLength(2);
  });

  it("fails the task once it has waited longer than its limit, saying that the job's retry budget was spent", async () => {
    const { extract } = await submitOneDocument();
    const tasks = new TaskLeaseRepository(database.db);
    const router = new CountingRouter(async () => {
      throw budgetSpent();
    });
    const outcome = await runner(tasks, router, 1_000, 5_000).run(extract, { ...attempt, waitedForTargetMs: 5_000 }, new AbortController().signal);
    expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/^no trial call succeeded while the job's retry budget was spent; gave up after waiting 5 s/) });
    expect(await tasks.findTask(extract.task_id)).toMatchObject({ status: 'failed' });
  });
});
