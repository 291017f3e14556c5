/**
 * The worker app in-process against real Postgres (fresh database, real migrations), real
 * Redis (own queue prefix) and the real llm-sim on ephemeral ports. Nothing is mocked.
 */
import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { loadConfig } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { deleteKeysWithPrefix } from '@switchyard/platform';
import { TaskQueues, WorkflowCatalog, parseWorkflowSubmission, planWorkflowJob } from '@switchyard/orchestration';
import { JobRepository } from '@switchyard/state';
import { createTestDatabase, type TestDatabase } from '@switchyard/state/testing/test-database';
import { createSimulator, type Simulator } from '../../llm-sim/src/simulator';
import { SIM_TARGETS, waitFor, writeRouterConfigForSim } from '@switchyard/devkit';
import { WorkerModule } from './worker.module';

const DOCS = ['alpha', 'beta', 'gamma', 'delta'].map((id) => ({ id, text: `Document ${id} says the deadline is ${id.length} weeks.` }));

const catalog = new WorkflowCatalog({ dir: 'config/workflows', logger: createLogger('catalog', 'silent') });

describe('worker: doc_review fan-out and fan-in', () => {
  let database: TestDatabase;
  let sim: Simulator;
  let simControl: string;
  let redis: IORedis;
  let tempDir: string;
  let routerConfig: string;
  const prefix = `{sy-int-${randomBytes(4).toString('hex')}}`;

  beforeAll(async () => {
    database = await createTestDatabase();
    tempDir = mkdtempSync(join(tmpdir(), 'switchyard-worker-int-'));
    sim = createSimulator({
      host: '127.0.0.1',
      controlPort: 0,
      logLevel: 'silent',
      targets: SIM_TARGETS.map((t) => ({ name: t.name, model: t.model, port: 0, latencyMs: 0 })),
    });
    const address = await sim.start();
    simControl = `http://127.0.0.1:${address.controlPort}`;
    const ports = SIM_TARGETS.map((t) => address.targets.find((a) => a.name === t.name)!.port);
    routerConfig = writeRouterConfigForSim(tempDir, ports);
    redis = new IORedis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  });

  afterAll(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
    await sim.stop();
    await database.destroy();
    rmSync(tempDir, { recursive: true, force: true });
  });

  async function startWorker(env: Record<string, string> = {}): Promise<INestApplicationContext> {
    const config = loadConfig({
      DATABASE_URL: database.url,
      QUEUE_PREFIX: prefix,
      ROUTER_CONFIG: routerConfig,
      LOG_LEVEL: 'silent',
      ...env,
    });
    return NestFactory.createApplicationContext(WorkerModule.forRoot(config, createLogger('worker', 'silent')), { logger: false });
  }

  async function submit(meta: Record<string, unknown> = {}, maxAttempts = 3): Promise<string> {
    const { workflow, submission } = parseWorkflowSubmission({ type: 'doc_review', input: { question: 'When is the deadline?', documents: DOCS }, meta }, catalog.workflows);
    const plan = planWorkflowJob(workflow, submission, { tenantId: 'acme', newId: randomUUID, trace: {} });
    await new JobRepository(database.db).createJob(plan.root, plan.tasks);
    const queues = new TaskQueues(redis, prefix, { maxAttempts });
    try {
      await queues.enqueue(plan.ready);
    } finally {
      await queues.close();
    }
    return plan.jobId;
  }

  const jobStatus = async (jobId: string) =>
    (await database.pool.query<{ status: string }>('select status from agent_task_state where task_id = $1', [jobId])).rows[0]!.status;

  it('holds synthesize until every extract is done, then completes the job from their summaries', async () => {
    const jobId = await submit();
    const rows = await database.pool.query<{ task_id: string; role: string }>('select task_id, role from agent_task_state where job_id = $1 and parent_task_id is not null', [jobId]);
    const synthesizeId = rows.rows.find((r) => r.role === 'synthesize')!.task_id;

    // Fan-out: only the four extracts are queued at submit; synthesize is enqueued when the last one finishes.
    const synthesizeQueue = new Queue('synthesize', { connection: redis, prefix });
    const extractQueue = new Queue('extract', { connection: redis, prefix });
    try {
      expect(await synthesizeQueue.getJobState(synthesizeId)).toBe('unknown');
      expect(await extractQueue.getJobCountByTypes('waiting')).toBe(DOCS.length);
    } finally {
      await synthesizeQueue.close();
      await extractQueue.close();
    }

    const app = await startWorker();
    try {
      await waitFor('job success', async () => ((await jobStatus(jobId)) === 'success' ? true : undefined), 30_000);
    } finally {
      await app.close();
    }

    const tasks = await database.pool.query<{
      role: string;
      status: string;
      current_step: number;
      step_checkpoints: { step: number; name: string; summary: Record<string, unknown> }[];
      finished_at: Date;
      started_at: Date;
    }>('select role, status, current_step, step_checkpoints, started_at, finished_at from agent_task_state where job_id = $1 and parent_task_id is not null', [jobId]);
    const extracts = tasks.rows.filter((t) => t.role === 'extract');
    const synthesize = tasks.rows.find((t) => t.role === 'synthesize')!;
    // Every step is checkpointed, in order.
    for (const task of tasks.rows) {
      expect(task.status).toBe('success');
      expect(task.step_checkpoints.map((c) => c.step)).toEqual([0, 1]);
    }
    expect(extracts.map((t) => t.step_checkpoints[0]!.name)).toEqual(Array(DOCS.length).fill('prepare'));
    // Fan-in: synthesize started after the last extract finished, and gathered all four summaries.
    const lastExtractDone = Math.max(...extracts.map((t) => t.finished_at.getTime()));
    expect(synthesize.started_at.getTime()).toBeGreaterThanOrEqual(lastExtractDone);
    const gathered = synthesize.step_checkpoints[0]!.summary as { summaries: { extract: { key: string; status: string }[] } };
    expect(gathered.summaries.extract.map((d) => d.key)).toEqual(['alpha', 'beta', 'gamma', 'delta']);
    expect(gathered.summaries.extract.every((d) => d.status === 'success')).toBe(true);

    const root = await database.pool.query<{ output_summary: { synthesis: unknown; documents: unknown[] } }>('select output_summary from agent_task_state where task_id = $1', [jobId]);
    expect(root.rows[0]!.output_summary.documents).toHaveLength(DOCS.length);
  });

  it('fails the job with a reason, and cancels synthesize, when an extract fails for good', async () => {
    for (const target of SIM_TARGETS) {
      await fetch(`${simControl}/targets/${target.name}/mode`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'error' }) });
    }
    try {
      const jobId = await submit({}, 1);
      const app = await startWorker({ TASK_MAX_ATTEMPTS: '1' });
      try {
        await waitFor('job failure', async () => ((await jobStatus(jobId)) === 'failed' ? true : undefined), 30_000);
      } finally {
        await app.close();
      }
      const rows = await database.pool.query<{ role: string; status: string; error: string | null }>(
        'select role, status, error from agent_task_state where job_id = $1 order by ordinal',
        [jobId],
      );
      const root = rows.rows.find((r) => r.role === 'job')!;
      expect(root.error).toMatch(/^task extract-\d failed: /);
      expect(root.error).toMatch(/server|500/);
      expect(rows.rows.find((r) => r.role === 'synthesize')!.status).toBe('cancelled');
      expect(rows.rows.filter((r) => r.role === 'extract').some((r) => r.status === 'failed')).toBe(true);
    } finally {
      await fetch(`${simControl}/reset`, { method: 'POST' });
    }
  });
});
