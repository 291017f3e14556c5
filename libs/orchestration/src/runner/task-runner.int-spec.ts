/**
 * TaskRunner against a real Postgres (fresh database, real migrations) with the paid-once
 * store; the model router is a counting stub at the port. Covers: a crash between a model
 * answer and its checkpoint replays the step without paying again; heartbeats continue
 * during a long model call; losing the lease mid-call stops the work.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { parseJobSubmission, type TaskPayload } from '@switchyard/contracts';
import { createLogger } from '@switchyard/observability';
import { ModelCallResultRepository, TaskRecoveryRepository, TaskRepository, type StepCheckpoint } from '@switchyard/state';
import { createTestDatabase, type TestDatabase } from '@switchyard/state/testing/test-database';
import { RetryBudgetSpentError } from '@switchyard/router';
import { agentRegistry } from '../agents/agent-registry';
import { IdempotentModelRouter } from '../agents/idempotent-model-router';
import type { ModelChatRequest, ModelChatResult, ModelRouter } from '../agents/model-router.port';
import { planJob } from '../planning/job-planners';
import { TaskRunner } from './task-runner';

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
class CrashingTaskRepository extends TaskRepository {
  crashes = 1;
  override async completeTask(...args: Parameters<TaskRepository['completeTask']>): Promise<void> {
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
  const submission = parseJobSubmission({ type: 'doc_review', input: { question: 'When is payment due?', documents: [{ id: 'a', text: 'Payment is due in 30 days.' }] } });
  const plan = planJob(submission, { tenantId: 'acme', newId: randomUUID, trace: {}, policy: { maxAttempts: 3 } });
  await new TaskRepository(database.db).createJob(plan.root, plan.tasks);
  const extract = plan.tasks.find((t) => t.role === 'extract')!;
  return { extract: { tenant_id: 'acme', job_id: plan.jobId, task_id: extract.taskId, trace: {} } };
}

function runner(tasks: TaskRepository, router: ModelRouter, heartbeatMs = 1_000, maxTargetWaitMs = 60_000) {
  return new TaskRunner({
    tasks,
    router: new IdempotentModelRouter(router, new ModelCallResultRepository(database.db)),
    agents: agentRegistry(),
    workerId: `worker-${randomUUID().slice(0, 6)}`,
    logger,
    heartbeatMs,
    maxTargetWaitMs,
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
    // One upstream call for the step, though the step ran twice.
    expect(router.requests).toHaveLength(1);
    expect(router.requests[0]!.idempotencyKey).toBe(`${extract.task_id}:1:1`);
    const done = (await tasks.findTask(extract.task_id))!;
    expect(done.status).toBe('success');
    expect(done.stepCheckpoints.map((c: StepCheckpoint) => c.step)).toEqual([0, 1]);
    expect(done.outputSummary).toMatchObject({ conclusion: 'Due in 30 days.' });
    const stored = await new ModelCallResultRepository(database.db).find(`${extract.task_id}:1:1`);
    expect(stored).toMatchObject({ taskId: extract.task_id, content: ANSWER, target: 'local_vllm_7b' });
  });

  it('keeps heartbeating during a long model call', async () => {
    const { extract } = await submitOneDocument();
    const tasks = new TaskRepository(database.db);
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
    const tasks = new TaskRepository(database.db);
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
    const tasks = new TaskRepository(database.db);
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

describe('TaskRunner and a spent retry budget (Postgres)', () => {
  const budgetSpent = () =>
    new RetryBudgetSpentError([{ target: 'local_vllm_7b', model: 'm', rule: 'fallback', outcome: 'error', errorClass: 'timeout', latencyMs: 1_000 }], 'timeout', 14, 'job', {
      trial: true,
    });

  it('tells the router how many tasks the job has, which sizes its retry budget', async () => {
    const { extract } = await submitOneDocument();
    const router = new CountingRouter();
    expect((await runner(new TaskRepository(database.db), router).run(extract, attempt, new AbortController().signal)).kind).toBe('completed');
    // One extract and one synthesize.
    expect(router.requests[0]!.context).toMatchObject({ jobId: extract.job_id, taskId: extract.task_id, jobTaskCount: 2 });
  });

  it('waits (released, no attempt spent) when the budget is spent, goes on when a later trial call answers', async () => {
    const { extract } = await submitOneDocument();
    const tasks = new TaskRepository(database.db);
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
    const tasks = new TaskRepository(database.db);
    const router = new CountingRouter(async () => {
      throw budgetSpent();
    });
    const outcome = await runner(tasks, router, 1_000, 5_000).run(extract, { ...attempt, waitedForTargetMs: 5_000 }, new AbortController().signal);
    expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/^no trial call succeeded while the job's retry budget was spent; gave up after waiting 5 s/) });
    expect(await tasks.findTask(extract.task_id)).toMatchObject({ status: 'failed' });
  });
});
