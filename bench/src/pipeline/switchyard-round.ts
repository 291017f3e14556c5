import { randomBytes, randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { EnvSchema } from '@switchyard/config';
import { createLogger, extractTraceContext, injectTraceCarrier, startTelemetry, withSpan, type Logger } from '@switchyard/observability';
import {
  TaskQueues,
  TaskRunner,
  WorkflowVersions,
  applySettlement,
  parseTaskPayload,
  parseWorkflowSubmission,
  planWorkflowJob,
  settlementFor,
} from '@switchyard/orchestration';
import { decideAdmission, loadTenantsConfig, loadWorkflowsDir } from '@switchyard/workflows';
import { AdmissionRepository, JobRepository, TaskLeaseRepository, connectDatabase, type DatabaseHandle } from '@switchyard/state';
import { cpuSnapshot, cpuSpent } from '../support/cpu';
import { InstantModelRouter } from '../support/fake-model-router';
import { Cleanup, QueryCounter, connectRedis, deleteKeys } from '../support/resources';
import { countdown, forEachLimit, secondsSince, warmUp } from './flow-helpers';
import type { RoundRequest, RoundResult } from './settings';

/**
 * The Switchyard side: what `POST /v1/jobs` does (JobsService.submit: validate, plan, write
 * the job tree in one statement as `queued`, an admission pass, enqueue the admitted job's ready
 * tasks; and a pass whenever a job ends, as the supervisor's AdmissionService does on the end
 * notification, starting the jobs it admits) and what the worker app does per queue
 * job (TaskProcessor → TaskRunner.run with the real agents: claim, checkpoint after each
 * step, complete — every write fenced by the lease). The model router is the one stub.
 */

/** The apps' settings when no environment variable is set (libs/config). */
const DEFAULTS = EnvSchema.parse({});

/**
 * The apps' logger (createLogger) at the default level (info), written to /dev/null.
 * BENCH_SY_LOG_LEVEL=silent is a profiling switch (what logging costs).
 */
function devNullLogger(service: string): Logger {
  return createLogger(service, process.env.BENCH_SY_LOG_LEVEL ?? 'info', pino.destination({ dest: '/dev/null', sync: true }));
}

/**
 * The fleet's running-job limit of the shipped config/tenants.yaml. The bench's tenant may run
 * as many (a tenant's own default of 2 would measure the limit, not the pipeline).
 */
const GLOBAL_RUNNING_LIMIT = loadTenantsConfig(EnvSchema.parse({}).TENANTS_CONFIG).global.max_running_jobs;

/** BENCH_ADMISSION=off is a profiling switch: jobs written pending and enqueued at once (what admission costs). */
const ADMISSION = process.env.BENCH_ADMISSION !== 'off';

/**
 * AdmissionService.admitNow without Nest: one pass under the advisory lock; the jobs it admits,
 * except `startedByCaller`, are started (their ready tasks enqueued) here.
 */
async function admitNow(admission: AdmissionRepository, queues: TaskQueues, startedByCaller: readonly string[] = []): Promise<string[]> {
  const admitted = await admission.admit(
    GLOBAL_RUNNING_LIMIT,
    (snapshot) => decideAdmission({ ...snapshot, globalLimit: GLOBAL_RUNNING_LIMIT, limitOf: () => GLOBAL_RUNNING_LIMIT }),
    { global: GLOBAL_RUNNING_LIMIT, of: () => GLOBAL_RUNNING_LIMIT },
  );
  for (const job of admitted) if (!startedByCaller.includes(job.jobId)) await queues.enqueue(job.ready);
  return admitted.map((job) => job.jobId);
}

/** AdmissionService.admitIfQueued: the pass at a job's end runs only when a job is queued. */
async function admitIfQueued(admission: AdmissionRepository, queues: TaskQueues): Promise<string[]> {
  return (await admission.anyQueued()) ? admitNow(admission, queues) : [];
}

/** CoalescedPass's rule: one pass at a time, and one more after it when asked meanwhile. */
function coalesced(pass: () => Promise<unknown>, onError: (error: unknown) => void): () => void {
  let running = false;
  let again = false;
  const run = (): void => {
    running = true;
    pass()
      .catch(onError)
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          run();
        }
      });
  };
  return () => {
    if (running) again = true;
    else run();
  };
}

/** The shipped workflows (config/workflows), as the apps load them. */
const { workflows } = loadWorkflowsDir(EnvSchema.parse({}).WORKFLOWS_DIR);

/** apps/worker/src/processors/task.processor.ts without Nest: the same payload check, span and outcome mapping. */
function taskProcessor(role: string, runner: TaskRunner, shutdown: AbortSignal, logger: Logger) {
  return async (job: Job, token?: string): Promise<{ outcome: string }> => {
    const payload = parseTaskPayload(role, job.data);
    const parent = extractTraceContext(payload.trace);
    const attributes = { 'switchyard.job_id': payload.job_id, 'switchyard.task_id': payload.task_id };
    return withSpan(`task ${role}`, parent, { attributes }, async () => {
      const outcome = await runner.run(
        payload,
        {
          attemptsMade: job.attemptsMade,
          maxAttempts: job.opts.attempts ?? 1,
          waitedForTargetMs: payload.waiting ? Date.now() - payload.waiting.since : 0,
        },
        shutdown,
      );
      // The worker app's own settlement of run outcomes (apps/worker TaskProcessor applies it the same way).
      const settlement = settlementFor(outcome, payload, Date.now());
      if (settlement.action === 'delay') logger.info({ task_id: payload.task_id, queue: role }, settlement.reason);
      return applySettlement(settlement, job, token);
    });
  };
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

/** One process's worth of supervisor + worker: two pools (as two apps would have), loggers, the runner's deps. */
interface Process {
  supervisorDb: DatabaseHandle;
  workerDb: DatabaseHandle;
  database: string;
  queries: QueryCounter;
  monitorRedis: Redis;
  supervisorLogger: Logger;
  workerLogger: Logger;
  router: InstantModelRouter;
  shutdown: AbortController;
}

async function timedJobs(request: RoundRequest, p: Process, label: string, jobs: number): Promise<RoundResult> {
  const s = request.settings;
  const prefix = `${request.prefix}:sy-${label}`;
  const tenant = `bench-${label}`;
  const supervisorJobs = new JobRepository(p.supervisorDb.db, p.supervisorDb.pool);
  const admission = new AdmissionRepository(p.supervisorDb.db, p.supervisorDb.pool);
  const producerRedis = connectRedis('sy-bench-supervisor');
  const workerRedis = connectRedis('sy-bench-worker');
  const policy = { maxAttempts: DEFAULTS.TASK_MAX_ATTEMPTS };
  const supervisorQueues = new TaskQueues(producerRedis, prefix, policy);
  const workerQueues = new TaskQueues(workerRedis, prefix, policy);
  const runner = new TaskRunner({
    tasks: new TaskLeaseRepository(p.workerDb.db, p.workerDb.pool),
    router: p.router,
    versions: new WorkflowVersions(),
    enqueue: (ready) => workerQueues.enqueue(ready),
    workerId: `bench-worker:${process.pid}:${randomBytes(3).toString('hex')}`,
    logger: p.workerLogger,
    heartbeatMs: DEFAULTS.HEARTBEAT_MS,
    maxTargetWaitMs: DEFAULTS.TARGET_WAIT_MAX_MS,
    optionalTargetWaitMs: DEFAULTS.OPTIONAL_TARGET_WAIT_MS,
  });
  const done = countdown(jobs, s.roundTimeoutMs, 'jobs');
  // The end of a job frees a slot: the supervisor's pass on the end notification.
  const admitOnJobEnd = coalesced(
    () => admitIfQueued(admission, supervisorQueues),
    (error) => done.fail(error instanceof Error ? error : new Error(String(error))),
  );
  const options = { connection: workerRedis, prefix, concurrency: s.switchyardConcurrency };
  const workers = (['extract', 'synthesize'] as const).map(
    (role) => new Worker(role, taskProcessor(role, runner, p.shutdown.signal, p.workerLogger), options),
  );
  // The synthesize task is the last of its job, and its completeTask marks the job's root
  // row success in the same transaction: a completed synthesize queue job is a finished job.
  workers[1]!.on('completed', () => {
    done.hit();
    if (ADMISSION) admitOnJobEnd();
  });
  for (const worker of workers) {
    worker.on('failed', (job, error) => done.fail(new Error(`${worker.name} job ${job?.id} failed: ${error.message}`)));
    worker.on('error', (error) => done.fail(error));
  }
  const progress = { submitted: 0, extracts: 0 };
  workers[0]!.on('completed', () => (progress.extracts += 1));
  let sampler: NodeJS.Timeout | undefined;
  const postgres = { pool: p.supervisorDb.pool, database: p.database };
  try {
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    const cpuBefore = await cpuSnapshot(p.monitorRedis, postgres);
    p.queries.reset();
    const start = process.hrtime.bigint();
    if (process.env.BENCH_VERBOSE) {
      sampler = setInterval(() => {
        const pools = [p.supervisorDb.pool, p.workerDb.pool].map((pool) => `${pool.totalCount}/${pool.idleCount}/${pool.waitingCount}`).join(' ');
        console.log(
          `  ${label} t=${secondsSince(start).toFixed(1)}s submitted=${progress.submitted} extracts=${progress.extracts} jobs=${done.count} pools(total/idle/waiting)=${pools} queries=${p.queries.total}`,
        );
      }, 500);
    }
    await forEachLimit(jobs, s.submitConcurrency, async (n) => {
      // JobsService.submit for POST /v1/jobs, without HTTP (the span stands in for the request's).
      await withSpan('POST /v1/jobs', extractTraceContext({}), {}, async () => {
        const { workflow, submission } = parseWorkflowSubmission(submissionBody(s.children, n), workflows);
        const plan = planWorkflowJob(workflow, submission, { tenantId: tenant, newId: randomUUID, trace: injectTraceCarrier() });
        const created = ADMISSION
          ? await supervisorJobs.createJobAdmitting(plan.root, plan.tasks, { tenant: GLOBAL_RUNNING_LIMIT, global: GLOBAL_RUNNING_LIMIT })
          : { ...(await supervisorJobs.createJob(plan.root, plan.tasks)), admitted: true };
        if (!created.created) throw new Error('bench job was not created');
        // Left queued by its insert: this submission's pass; not admitted then either (the fleet at its limit): a pass at a job's end starts it.
        if (created.admitted || (await admitNow(admission, supervisorQueues, [plan.jobId])).includes(plan.jobId)) await supervisorQueues.enqueue(plan.ready);
        p.supervisorLogger.info({ job_id: plan.jobId, tenant_id: tenant, type: submission.type, tasks: plan.tasks.length }, 'job submitted');
      });
      progress.submitted += 1;
    });
    await done.promise;
    const seconds = secondsSince(start);
    const queries = p.queries.total;
    const queryKinds = [...p.queries.byKind.entries()];
    const cpu = cpuSpent(cpuBefore, await cpuSnapshot(p.monitorRedis, postgres));

    // Untimed: every job's root row must say success, and every task of it too.
    const check = await p.supervisorDb.pool.query<{ roots_ok: number; tasks_not_ok: number }>(
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
    return { side: 'switchyard', label, jobs, queueJobs, seconds, tasksPerSecond: queueJobs / seconds, cpu, queries, queryKinds };
  } finally {
    clearInterval(sampler);
    await Promise.allSettled([...workers.map((w) => w.close()), supervisorQueues.close(), workerQueues.close()]);
    producerRedis.disconnect();
    workerRedis.disconnect();
    await deleteKeys(`${prefix}:`);
  }
}

export async function runSwitchyardRound(request: RoundRequest, cleanup: Cleanup): Promise<RoundResult> {
  const s = request.settings;
  // As the apps do at boot: spans are created (and travel with every queue job), exported only
  // when OTEL_EXPORTER_OTLP_ENDPOINT is set (the tracing bench sets it to a local receiver).
  // BENCH_SY_TELEMETRY=off is a profiling switch (what the OpenTelemetry SDK costs).
  if (process.env.BENCH_SY_TELEMETRY !== 'off') {
    const telemetry = startTelemetry({ serviceName: 'switchyard-bench', exportFromEnv: Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT) });
    cleanup.add('telemetry', () => telemetry.shutdown());
  }
  const supervisorDb = connectDatabase(request.dbUrl, { max: s.poolSize, application_name: 'sy-bench-supervisor' });
  cleanup.add('supervisor pool', () => supervisorDb.close());
  const workerDb = connectDatabase(request.dbUrl, { max: s.poolSize, application_name: 'sy-bench-worker' });
  cleanup.add('worker pool', () => workerDb.close());
  const monitorRedis = connectRedis('sy-bench-monitor');
  cleanup.add('monitor redis', async () => {
    monitorRedis.disconnect();
  });
  const queries = new QueryCounter();
  queries.attach(supervisorDb.pool);
  queries.attach(workerDb.pool);
  const shutdown = new AbortController();
  // Every running task listens on the worker's one shutdown signal, so more than 10 at once
  // is expected, not a leak (the worker app gets Node's MaxListenersExceededWarning here).
  setMaxListeners(0, shutdown.signal);
  const p: Process = {
    supervisorDb,
    workerDb,
    database: new URL(request.dbUrl).pathname.slice(1),
    queries,
    monitorRedis,
    supervisorLogger: devNullLogger('supervisor'),
    workerLogger: devNullLogger('worker'),
    router: new InstantModelRouter(),
    shutdown,
  };
  await warmUp(s, (batch) => timedJobs(request, p, `${request.label}-warmup${batch}`, s.warmupJobs));
  return timedJobs(request, p, request.label, s.jobs);
}
