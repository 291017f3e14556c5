import { randomBytes, randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { DelayedError, FlowProducer, UnrecoverableError, Worker, type DefaultJobOptions, type FlowJob, type Job } from 'bullmq';
import pino from 'pino';
import { ZodError } from 'zod';
import { parseJobSubmission, parseQueueJob, type AgentRole } from '@switchyard/contracts';
import { extractTraceContext, injectTraceCarrier, startTelemetry, withSpan, type Logger } from '@switchyard/observability';
import { TaskRunner, agentRegistry, planJob, taskJobOptions } from '@switchyard/orchestration';
import { TaskRepository, connectDatabase, type DatabaseHandle } from '@switchyard/state';
import { InstantModelRouter } from './support/fake-model-router';
import { fixed, heading, median, table, verdict } from './support/report';
import { Cleanup, QueryCounter, benchPrefix, connectRedis, createBenchDatabase, deleteKeys } from './support/resources';

/** The bar: the pipeline must reach a quarter of raw BullMQ flow throughput. */
export const PIPELINE_TARGET_RATIO = 0.25;

const RAW_PARENT = 'raw-parent';
const RAW_CHILD = 'raw-child';

export interface PipelineSettings {
  /** doc_review jobs per measured round; each is 1 + `children` queue jobs. */
  jobs: number;
  /** Documents per job = extract tasks = children of the flow's parent. */
  children: number;
  /** Measured rounds per side, alternating raw / switchyard. */
  rounds: number;
  warmupJobs: number;
  /** BullMQ worker concurrency of each queue's worker, per side. */
  rawConcurrency: number;
  switchyardConcurrency: number;
  /** Submissions in flight at once (the supervisor serves concurrent requests). */
  submitConcurrency: number;
  /** Size of each Postgres pool (supervisor's and worker's), the apps' default is 16. */
  poolSize: number;
  /** Options of the raw baseline's queue jobs: BullMQ defaults, or the product's taskJobOptions. */
  rawJobOptions: 'bullmq-default' | 'product';
  roundTimeoutMs: number;
}

const int = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
};

/** Defaults chosen by trying them on this machine (docs/BENCHMARKS.md); env vars override for profiling. */
export function pipelineSettingsFromEnv(): PipelineSettings {
  return {
    jobs: int('BENCH_JOBS', 400),
    children: int('BENCH_CHILDREN', 5),
    rounds: int('BENCH_ROUNDS', 2),
    warmupJobs: int('BENCH_WARMUP_JOBS', 100),
    rawConcurrency: int('BENCH_RAW_CONCURRENCY', 50),
    switchyardConcurrency: int('BENCH_SY_CONCURRENCY', 50),
    submitConcurrency: int('BENCH_SUBMIT_CONCURRENCY', 16),
    poolSize: int('BENCH_POOL_SIZE', 16),
    rawJobOptions: process.env.BENCH_RAW_JOB_OPTIONS === 'product' ? 'product' : 'bullmq-default',
    roundTimeoutMs: int('BENCH_ROUND_TIMEOUT_MS', 60_000),
  };
}

interface RoundResult {
  side: 'raw' | 'switchyard';
  label: string;
  jobs: number;
  queueJobs: number;
  seconds: number;
  tasksPerSecond: number;
  queries?: number;
  queryKinds?: Map<string, number>;
}

/** Resolves when `expected` hits have arrived; rejects on the first failure or at the deadline. */
function countdown(expected: number, timeoutMs: number, what: string) {
  let count = 0;
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms with ${count}/${expected} ${what} done`)), timeoutMs);
  return {
    promise: promise.finally(() => clearTimeout(timer)),
    hit() {
      count += 1;
      if (count === expected) resolve();
    },
    fail(error: Error) {
      reject(error);
    },
  };
}

async function forEachLimit(count: number, limit: number, fn: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, count) }, async () => {
    while (next < count) {
      const index = next;
      next += 1;
      await fn(index);
    }
  });
  await Promise.all(lanes);
}

const secondsSince = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

// ---------------------------------------------------------------------------------------
// Baseline: raw BullMQ flows of the same shape (one parent, K children), no-op processors.

function rawFlow(children: number, opts: DefaultJobOptions): FlowJob {
  const jobId = randomUUID();
  // The same payload shape as a Switchyard task job, so both sides move the same bytes.
  const data = () => ({ tenant_id: 'bench', job_id: jobId, task_id: randomUUID(), trace: {} });
  return {
    name: 'parent',
    queueName: RAW_PARENT,
    data: data(),
    opts,
    children: Array.from({ length: children }, () => ({ name: 'child', queueName: RAW_CHILD, data: data(), opts })),
  };
}

async function rawRound(basePrefix: string, label: string, jobs: number, s: PipelineSettings): Promise<RoundResult> {
  const prefix = `${basePrefix}:raw-${label}`;
  const producerRedis = connectRedis('sy-bench-raw-producer');
  const workerRedis = connectRedis('sy-bench-raw-worker');
  const flows = new FlowProducer({ connection: producerRedis, prefix });
  const done = countdown(jobs, s.roundTimeoutMs, 'raw parents');
  const noop = async () => ({ ok: true });
  const options = { connection: workerRedis, prefix, concurrency: s.rawConcurrency };
  const workers = [new Worker(RAW_CHILD, noop, options), new Worker(RAW_PARENT, noop, options)];
  workers[1]!.on('completed', () => done.hit());
  for (const worker of workers) {
    worker.on('failed', (job, error) => done.fail(new Error(`raw job ${job?.id} failed: ${error.message}`)));
    worker.on('error', (error) => done.fail(error));
  }
  const opts = s.rawJobOptions === 'product' ? taskJobOptions({ maxAttempts: 5 }) : {};
  try {
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    const start = process.hrtime.bigint();
    await forEachLimit(jobs, s.submitConcurrency, async () => {
      await flows.add(rawFlow(s.children, opts));
    });
    await done.promise;
    const seconds = secondsSince(start);
    const queueJobs = jobs * (s.children + 1);
    return { side: 'raw', label, jobs, queueJobs, seconds, tasksPerSecond: queueJobs / seconds };
  } finally {
    await Promise.allSettled([...workers.map((w) => w.close()), flows.close()]);
    producerRedis.disconnect();
    workerRedis.disconnect();
    await deleteKeys(`${prefix}:`);
  }
}

// ---------------------------------------------------------------------------------------
// Switchyard: planJob → TaskRepository.createJob → FlowProducer.add, consumed by workers
// whose processor is the worker app's TaskProcessor logic around the real TaskRunner.

/** The apps' logger (libs/observability createLogger) at its default level, written to /dev/null. */
function devNullLogger(service: string): Logger {
  return pino(
    {
      name: service,
      level: 'info',
      base: { service, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['authorization', '*.authorization', '*.*.authorization', 'apiKey', '*.apiKey', 'api_key', '*.api_key', 'password', '*.password'],
        censor: '[redacted]',
      },
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ dest: '/dev/null', sync: true }),
  );
}

/** apps/worker/src/processors/task.processor.ts, minus Nest: the same payload check, span and outcome mapping. */
function taskProcessor(role: AgentRole, runner: TaskRunner, shutdown: AbortSignal, logger: Logger) {
  return async (job: Job, token?: string): Promise<{ outcome: string }> => {
    let payload;
    try {
      payload = parseQueueJob(role, job.data).data;
    } catch (error) {
      if (error instanceof ZodError) throw new UnrecoverableError(`malformed ${role} payload: ${error.message}`);
      throw error;
    }
    const parent = extractTraceContext(payload.trace);
    return withSpan(`task ${role}`, parent, { attributes: { 'switchyard.job_id': payload.job_id, 'switchyard.task_id': payload.task_id } }, async () => {
      const outcome = await runner.run(payload, { attemptsMade: job.attemptsMade, maxAttempts: job.opts.attempts ?? 1 }, shutdown);
      switch (outcome.kind) {
        case 'completed':
        case 'already_done':
        case 'lease_lost':
          return { outcome: outcome.kind };
        case 'busy':
          logger.info({ task_id: payload.task_id, queue: role }, 'task held by another worker; rechecking later');
          await job.moveToDelayed(Date.now() + 5_000, token);
          throw new DelayedError();
        case 'released':
          throw outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error));
        case 'failed':
          throw new UnrecoverableError(outcome.reason);
        case 'not_runnable':
          throw new UnrecoverableError(`task ${payload.task_id} is ${outcome.status}`);
      }
    });
  };
}

interface SwitchyardContext {
  supervisorDb: DatabaseHandle;
  workerDb: DatabaseHandle;
  queries: QueryCounter;
  supervisorLogger: Logger;
  workerLogger: Logger;
  router: InstantModelRouter;
  shutdown: AbortController;
}

function submissionBody(children: number, n: number) {
  return {
    type: 'doc_review',
    input: {
      question: 'What does the contract say about the warranty period?',
      documents: Array.from({ length: children }, (_, i) => ({
        id: `doc-${n}-${i + 1}`,
        text: `Document ${i + 1}. The warranty period is ${12 + i} months.\n\nClaims need an invoice and a serial number.`,
      })),
    },
  };
}

async function switchyardRound(ctx: SwitchyardContext, basePrefix: string, label: string, jobs: number, s: PipelineSettings): Promise<RoundResult> {
  const prefix = `${basePrefix}:sy-${label}`;
  const tenant = `bench-${label}`;
  const supervisorTasks = new TaskRepository(ctx.supervisorDb.db);
  const workerTasks = new TaskRepository(ctx.workerDb.db);
  const runner = new TaskRunner({
    tasks: workerTasks,
    router: ctx.router,
    agents: agentRegistry(),
    workerId: `bench-worker:${process.pid}:${randomBytes(3).toString('hex')}`,
    logger: ctx.workerLogger,
    heartbeatMs: 5_000,
  });
  const producerRedis = connectRedis('sy-bench-supervisor');
  const workerRedis = connectRedis('sy-bench-worker');
  const flows = new FlowProducer({ connection: producerRedis, prefix });
  const done = countdown(jobs, s.roundTimeoutMs, 'jobs');
  const options = { connection: workerRedis, prefix, concurrency: s.switchyardConcurrency };
  const workers = (['extract', 'synthesize'] as const).map(
    (role) => new Worker(role, taskProcessor(role, runner, ctx.shutdown.signal, ctx.workerLogger), options),
  );
  // The synthesize task is the last of its job: completeTask marks the root row success in
  // the same statement, so a completed synthesize queue job is a finished job.
  workers[1]!.on('completed', () => done.hit());
  for (const worker of workers) {
    worker.on('failed', (job, error) => done.fail(new Error(`${worker.name} job ${job?.id} failed: ${error.message}`)));
    worker.on('error', (error) => done.fail(error));
  }
  try {
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    ctx.queries.reset();
    const start = process.hrtime.bigint();
    await forEachLimit(jobs, s.submitConcurrency, async (n) => {
      // What JobsService.submit does for POST /v1/jobs, without HTTP: validate, plan, write, enqueue.
      await withSpan('POST /v1/jobs', extractTraceContext({}), {}, async () => {
        const submission = parseJobSubmission(submissionBody(s.children, n));
        const plan = planJob(submission, { tenantId: tenant, newId: randomUUID, trace: injectTraceCarrier(), policy: { maxAttempts: 5 } });
        const created = await supervisorTasks.createJob(plan.root, plan.tasks);
        if (!created.created) throw new Error('bench job was not created');
        try {
          await flows.add(plan.flow);
        } catch (error) {
          await supervisorTasks.deleteJob(tenant, plan.jobId);
          throw error;
        }
        ctx.supervisorLogger.info({ job_id: plan.jobId, tenant_id: tenant, type: submission.type, tasks: plan.tasks.length }, 'job submitted');
      });
    });
    await done.promise;
    const seconds = secondsSince(start);
    const queries = ctx.queries.total;
    const queryKinds = new Map(ctx.queries.byKind);

    // Not timed: every job's root row must say success, and every task too.
    const check = await ctx.supervisorDb.pool.query<{ roots_ok: number; tasks_not_ok: number }>(
      `/* bench */ select count(*) filter (where parent_task_id is null and status = 'success')::int as roots_ok,
         count(*) filter (where parent_task_id is not null and status <> 'success')::int as tasks_not_ok
       from agent_task_state where tenant_id = $1`,
      [tenant],
    );
    const row = check.rows[0]!;
    if (row.roots_ok !== jobs || row.tasks_not_ok !== 0) {
      throw new Error(`round ${label}: ${row.roots_ok}/${jobs} jobs succeeded, ${row.tasks_not_ok} tasks not successful`);
    }
    const queueJobs = jobs * (s.children + 1);
    return { side: 'switchyard', label, jobs, queueJobs, seconds, tasksPerSecond: queueJobs / seconds, queries, queryKinds };
  } finally {
    await Promise.allSettled([...workers.map((w) => w.close()), flows.close()]);
    producerRedis.disconnect();
    workerRedis.disconnect();
    await deleteKeys(`${prefix}:`);
  }
}

// ---------------------------------------------------------------------------------------

export interface PipelineSummary {
  raw: number;
  switchyard: number;
  ratio: number;
  pass: boolean;
}

export async function runPipelineBench(s: PipelineSettings = pipelineSettingsFromEnv()): Promise<PipelineSummary> {
  heading('Bench 1: doc_review pipeline throughput vs raw BullMQ flows');
  console.log(
    [
      `shape: ${s.jobs} jobs per round, each 1 parent + ${s.children} children = ${s.jobs * (s.children + 1)} queue jobs; ` +
        `${s.rounds} measured rounds per side, alternating, after a ${s.warmupJobs}-job warm-up of each`,
      `raw BullMQ: FlowProducer + 2 Workers (concurrency ${s.rawConcurrency} each), no-op processors, job options: ${s.rawJobOptions}`,
      `switchyard: parseJobSubmission → planJob → TaskRepository.createJob → FlowProducer.add; Workers "extract" and "synthesize"`,
      `  (concurrency ${s.switchyardConcurrency} each) run TaskRunner.run with agentRegistry(): claim, checkpoint, complete in Postgres;`,
      `  Postgres pools: supervisor ${s.poolSize} + worker ${s.poolSize} connections; submissions in flight: ${s.submitConcurrency} (both sides)`,
      `  the model router is a stub that answers instantly with a valid summary: this measures orchestration overhead, not an LLM`,
      `rate = queue jobs completed / seconds from the first add to the last parent's completion; one process, ${cpus().length} cores`,
    ].join('\n'),
  );

  const cleanup = new Cleanup();
  const onSignal = () => {
    void cleanup.runAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const telemetry = startTelemetry({ serviceName: 'switchyard-bench', exportFromEnv: false });
    cleanup.add('telemetry', () => telemetry.shutdown());
    const dbUrl = await createBenchDatabase(cleanup);
    // Every round's BullMQ keys live under this prefix; each round deletes its own, and this sweeps whatever a failure left.
    const prefix = benchPrefix();
    cleanup.add(`redis keys ${prefix}*`, async () => {
      await deleteKeys(prefix);
    });
    const supervisorDb = connectDatabase(dbUrl, { max: s.poolSize, application_name: 'sy-bench-supervisor' });
    cleanup.add('supervisor pool', () => supervisorDb.close());
    const workerDb = connectDatabase(dbUrl, { max: s.poolSize, application_name: 'sy-bench-worker' });
    cleanup.add('worker pool', () => workerDb.close());
    const queries = new QueryCounter();
    queries.attach(supervisorDb.pool);
    queries.attach(workerDb.pool);
    const ctx: SwitchyardContext = {
      supervisorDb,
      workerDb,
      queries,
      supervisorLogger: devNullLogger('supervisor'),
      workerLogger: devNullLogger('worker'),
      router: new InstantModelRouter(),
      shutdown: new AbortController(),
    };

    await rawRound(prefix, 'warm-up', s.warmupJobs, s);
    await switchyardRound(ctx, prefix, 'warm-up', s.warmupJobs, s);
    const results: RoundResult[] = [];
    for (let round = 1; round <= s.rounds; round += 1) {
      results.push(await rawRound(prefix, `r${round}`, s.jobs, s));
      results.push(await switchyardRound(ctx, prefix, `r${round}`, s.jobs, s));
    }

    const tasksPerRound = s.jobs * (s.children + 1);
    console.log(
      '\n' +
        table(
          ['round', 'side', 'queue jobs', 'seconds', 'tasks/s', 'PG queries', 'PG queries/task'],
          results.map((r) => [
            r.label,
            r.side,
            fixed(r.queueJobs),
            fixed(r.seconds, 2),
            fixed(r.tasksPerSecond),
            r.queries === undefined ? '-' : fixed(r.queries),
            r.queries === undefined ? '-' : fixed(r.queries / tasksPerRound, 2),
          ]),
        ),
    );

    const raw = median(results.filter((r) => r.side === 'raw').map((r) => r.tasksPerSecond));
    const sy = median(results.filter((r) => r.side === 'switchyard').map((r) => r.tasksPerSecond));
    const ratio = sy / raw;
    const pass = ratio >= PIPELINE_TARGET_RATIO;
    console.log(
      '\n' +
        table(
          ['median of rounds', 'tasks/s'],
          [
            ['raw BullMQ flows', fixed(raw)],
            ['switchyard pipeline', fixed(sy)],
            [`ratio switchyard/raw (target ≥ ${PIPELINE_TARGET_RATIO})`, `${fixed(ratio, 3)} ${verdict(pass)}`],
          ],
        ),
    );

    // Where the Postgres round trips go, per doc_review job (last switchyard round).
    const last = results.filter((r) => r.side === 'switchyard').at(-1);
    if (last?.queryKinds) {
      const kinds = [...last.queryKinds.entries()].sort((a, b) => b[1] - a[1]);
      console.log(
        `\nPostgres statements per doc_review job (${s.children + 1} tasks), round ${last.label}:\n` +
          table(
            ['statement', 'per job', 'per task'],
            kinds.map(([kind, n]) => [kind, fixed(n / last.jobs, 2), fixed(n / last.queueJobs, 2)]),
          ),
      );
    }
    return { raw, switchyard: sy, ratio, pass };
  } finally {
    await cleanup.runAll();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}
