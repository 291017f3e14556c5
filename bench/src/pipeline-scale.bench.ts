import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { Pool } from 'pg';
import { fixed, heading, percentile, table, verdict } from './support/report';
import { Cleanup, benchPrefix, connectRedis, createBenchDatabase } from './support/resources';
import { WaitSampler, activityBetween, settledDatabaseActivity, type DatabaseActivity } from './pipeline-e2e/database-activity';
import { closedLoop, type LoopTiming } from './pipeline-e2e/flows';
import { cpuBetween, readCpuCounters, residentMegabytes } from './pipeline-e2e/process-cpu';
import { positiveInt } from './support/env';
import { APP_NAME_PREFIX, Platform, deletePlatformKeys, logMessagesSince, outputOffsets, simPeakConcurrency, startSim, type Sim } from './pipeline-e2e/stack';
import { SwitchyardDriver } from './pipeline-e2e/switchyard-driver';

/**
 * Bench 9: the pipeline at scale. The same real processes as bench 8, with llm-sim answering
 * after 200 ms, run with 1, 2 and 4 worker processes in turn (workers are added to the same
 * supervisor and database): throughput, job latency, what each worker holds in memory with
 * 100 tasks at once, Postgres lock waits and transactions per task.
 */

/** Issue 12's bar: a worker's RSS with 100 concurrent tasks. */
export const SCALE_TARGET_RSS_MB = 150;

interface ScaleSettings {
  jobs: number;
  documents: number;
  inFlight: number;
  workerCounts: number[];
  workerConcurrency: number;
  poolSize: number;
  latencyMs: number;
  jobTimeoutMs: number;
  /** NODE_OPTIONS of every worker (e.g. `--heapsnapshot-signal=SIGUSR2` to look at what a worker holds). */
  workerNodeOptions: string | undefined;
}

export function scaleSettingsFromEnv(): ScaleSettings {
  const counts = (process.env.BENCH_SCALE_WORKERS ?? '1,2,4').split(',').map((c) => Number(c.trim()));
  if (counts.some((c) => !Number.isInteger(c) || c < 1) || counts.some((c, i) => i > 0 && c <= counts[i - 1]!)) {
    throw new Error(`BENCH_SCALE_WORKERS must be increasing positive integers, e.g. 1,2,4; got "${process.env.BENCH_SCALE_WORKERS}"`);
  }
  return {
    jobs: positiveInt('BENCH_SCALE_JOBS', 500),
    documents: positiveInt('BENCH_SCALE_DOCUMENTS', 10),
    inFlight: positiveInt('BENCH_SCALE_IN_FLIGHT', 50),
    workerCounts: counts,
    workerConcurrency: positiveInt('BENCH_SCALE_WORKER_CONCURRENCY', 100),
    poolSize: positiveInt('BENCH_SCALE_POOL_SIZE', 8),
    latencyMs: positiveInt('BENCH_SCALE_SIM_LATENCY_MS', 200),
    jobTimeoutMs: positiveInt('BENCH_SCALE_JOB_TIMEOUT_MS', 600_000),
    workerNodeOptions: process.env.BENCH_SCALE_WORKER_NODE_OPTIONS || undefined,
  };
}

interface Step {
  workers: number;
  tasks: number;
  timing: LoopTiming;
  cpu: Map<string, number>;
  /** Largest RSS seen per worker during the step, MB. */
  rssMb: Map<string, number>;
  /** Most tasks held by the fleet at once (BullMQ active lists), and worker-1's RSS while alone holding ≥ 100. */
  peakActive: number;
  rssAt100?: number;
  simPeak: Record<string, number>;
  activity: DatabaseActivity;
  waits: WaitSampler;
  /** The workers' log lines in the step, by message. */
  logs: Map<string, number>;
}

export interface ScaleSummary {
  pass: boolean;
}

/**
 * Every 250 ms: each worker's RSS, and the tasks the fleet holds at once (BullMQ's active lists
 * of the doc_review queues). Keeps the largest RSS per worker, the largest number of tasks
 * held, and worker-1's largest RSS while it alone held at least 100 tasks.
 */
function sampleMemory(platform: Platform, redis: Redis, prefix: string) {
  const peakRss = new Map<string, number>();
  let peakActive = 0;
  let rssAt100: number | undefined;
  let busy = false;
  const sample = async () => {
    if (busy) return;
    busy = true;
    try {
      const active = (await redis.llen(`${prefix}:extract:active`)) + (await redis.llen(`${prefix}:synthesize:active`));
      peakActive = Math.max(peakActive, active);
      for (const worker of platform.workers) {
        const mb = residentMegabytes(worker.child.pid!);
        if (mb === undefined) continue;
        peakRss.set(worker.name, Math.max(peakRss.get(worker.name) ?? 0, mb));
        if (platform.workers.length === 1 && active >= 100) rssAt100 = Math.max(rssAt100 ?? 0, mb);
      }
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void sample(), 250);
  return {
    stop: async () => {
      clearInterval(timer);
      await sample();
      return { peakRss, peakActive, rssAt100 };
    },
  };
}

async function resetSimPeaks(sim: Sim): Promise<void> {
  const res = await fetch(`${sim.control}/calls`, { method: 'DELETE' });
  if (res.status !== 200) throw new Error(`llm-sim refused to clear its call log: ${res.status}`);
}

/**
 * The memory step alone (`node bench/run.js worker-memory`, about a minute): one worker, 60 jobs
 * of 10 documents with 25 in flight, so the worker holds 100+ tasks at once for some seconds;
 * it prints the worker's RSS at ≥ 100 tasks against the 150 MB target. BENCH_MEMORY_JOBS
 * (60) and the BENCH_SCALE_* settings other than the worker counts apply.
 */
export function workerMemorySettingsFromEnv(): ScaleSettings {
  return { ...scaleSettingsFromEnv(), workerCounts: [1], jobs: positiveInt('BENCH_MEMORY_JOBS', 60), inFlight: positiveInt('BENCH_SCALE_IN_FLIGHT', 25) };
}

export async function runPipelineScaleBench(s: ScaleSettings = scaleSettingsFromEnv()): Promise<ScaleSummary> {
  heading('Bench 9: the pipeline at scale (1, 2, 4 workers; llm-sim at 200 ms)');
  console.log(
    [
      `${fixed(s.jobs)} doc_review jobs of ${s.documents} documents per worker count (${fixed(s.jobs * (s.documents + 1))} tasks), ${s.inFlight} jobs in flight (closed loop, POST /v1/jobs, end by NOTIFY);`,
      `llm-sim answers every call after ${s.latencyMs} ms; the router config's max_concurrency is raised to 1000 on every target (the shipped 8–50 would measure the limit);`,
      `workers: WORKER_CONCURRENCY ${s.workerConcurrency}, DATABASE_POOL_SIZE ${s.poolSize} (the shared Postgres allows 100 connections); worker counts ${s.workerCounts.join(', ')}, added to one supervisor`,
      `load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    ].join('\n'),
  );
  const cleanup = new Cleanup();
  const onSignal = () => void cleanup.runAll().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-scale-'));
    cleanup.add('temp dir', async () => rmSync(dir, { recursive: true, force: true }));
    const dbUrl = await createBenchDatabase(cleanup);
    const database = new URL(dbUrl).pathname.slice(1);
    const prefix = benchPrefix();
    cleanup.add(`redis keys of ${prefix}`, () => deletePlatformKeys(prefix));
    const sim = await startSim(dir, cleanup, s.latencyMs, 1_000);
    const workerEnv = {
      WORKER_CONCURRENCY: String(s.workerConcurrency),
      DATABASE_POOL_SIZE: String(s.poolSize),
      ...(s.workerNodeOptions === undefined ? {} : { NODE_OPTIONS: s.workerNodeOptions }),
    };
    const platform = await Platform.start(
      { dbUrl, prefix, sim, dir, runningJobs: Math.max(64, s.inFlight), workerEnv },
      cleanup,
    );
    const monitor = new Pool({ connectionString: dbUrl, max: 2, application_name: 'sy-bench-monitor' });
    cleanup.add('monitor pool', () => monitor.end());
    const monitorRedis = connectRedis('sy-bench-monitor');
    cleanup.add('monitor redis', async () => monitorRedis.disconnect());
    const driver = await SwitchyardDriver.start(platform.baseUrl, dbUrl);
    cleanup.add('switchyard driver', () => driver.close());

    const steps: Step[] = [];
    for (const count of s.workerCounts) {
      while (platform.workers.length < count) {
        const worker = await platform.startWorker();
        console.log(`  ${worker.name} started: RSS ${fixed(residentMegabytes(worker.child.pid!) ?? Number.NaN)} MB idle`);
      }
      // Untimed: every new worker warms up (JIT, pools, connections) before the step is timed.
      await closedLoop(Math.min(s.jobs, s.inFlight), s.inFlight, () => driver.runJob(s.documents, s.jobTimeoutMs));
      const pids = new Map<string, number>([
        ['supervisor', platform.supervisor.child.pid!],
        ['llm-sim', sim.process.child.pid!],
        ...platform.workers.map((w): [string, number] => [w.name, w.child.pid!]),
      ]);
      const watch = { pids, pool: monitor, database, applicationPrefix: APP_NAME_PREFIX, redis: monitorRedis };
      const activityBefore = await settledDatabaseActivity(monitor, database);
      await resetSimPeaks(sim);
      const waits = new WaitSampler(monitor, database, APP_NAME_PREFIX);
      const memory = sampleMemory(platform, monitorRedis, prefix);
      const before = await readCpuCounters(watch);
      const offsets = outputOffsets(platform.workers);
      waits.start();
      const timing = await closedLoop(s.jobs, s.inFlight, () => driver.runJob(s.documents, s.jobTimeoutMs));
      waits.stop();
      const cpu = cpuBetween(before, await readCpuCounters(watch));
      const { peakRss: rssMb, peakActive, rssAt100 } = await memory.stop();
      const simPeak = await simPeakConcurrency(sim);
      const activity = activityBetween(activityBefore, await settledDatabaseActivity(monitor, database));
      const logs = logMessagesSince(platform.workers, offsets);
      const step: Step = { workers: count, tasks: s.jobs * (s.documents + 1), timing, cpu, rssMb, peakActive, rssAt100, simPeak, activity, waits, logs };
      steps.push(step);
      console.log(
        `  ${count} worker(s): ${fixed(step.tasks / timing.seconds)} tasks/s, job p95 ${fixed(percentile(timing.latenciesMs, 95))} ms (${fixed(timing.seconds, 1)} s; load average ${loadavg()[0]!.toFixed(2)})`,
      );
    }
    return report(s, steps);
  } finally {
    await cleanup.runAll();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

function report(s: ScaleSettings, steps: readonly Step[]): ScaleSummary {
  const perTaskUs = (step: Step, filter: (part: string) => boolean) =>
    ([...step.cpu.entries()].filter(([part]) => filter(part)).reduce((sum, [, seconds]) => sum + seconds, 0) * 1e6) / step.tasks;
  const isWorker = (p: string) => p.startsWith('worker-');
  const isPostgres = (p: string) => p.startsWith('postgres');
  console.log(
    '\n' +
      table(
        ['workers', 'tasks/s', 'jobs/s', 'job p50 ms', 'job p95 ms', 'slot bound tasks/s', 'cores busy', 'CPU µs/task: supervisor', 'workers', 'postgres', 'redis', 'llm-sim', 'tasks held at once', 'sim peak open calls', 'max worker RSS MB'],
        steps.map((step) => {
          const seconds = step.timing.seconds;
          const allCpu = [...step.cpu.values()].reduce((a, b) => a + b, 0);
          // Each task holds a worker slot for at least one model call of latencyMs.
          const slotBound = (step.workers * s.workerConcurrency * 1_000) / s.latencyMs;
          return [
            String(step.workers),
            fixed(step.tasks / seconds),
            fixed(step.timing.latenciesMs.length / seconds, 1),
            fixed(percentile(step.timing.latenciesMs, 50)),
            fixed(percentile(step.timing.latenciesMs, 95)),
            fixed(slotBound),
            fixed(allCpu / seconds, 2),
            fixed(perTaskUs(step, (p) => p === 'supervisor')),
            fixed(perTaskUs(step, isWorker)),
            fixed(perTaskUs(step, isPostgres)),
            fixed(perTaskUs(step, (p) => p.startsWith('redis'))),
            fixed(perTaskUs(step, (p) => p === 'llm-sim')),
            String(step.peakActive),
            String(Math.max(...Object.values(step.simPeak))),
            fixed(Math.max(...step.rssMb.values())),
          ];
        }),
      ),
  );
  console.log(`"cores busy": CPU seconds of every process above per second of the step (${cpus().length} cores on this machine, shared with other work).`);

  const single = steps.find((step) => step.workers === 1);
  let pass = true;
  if (single) {
    const rss = single.rssAt100;
    pass = rss !== undefined && rss <= SCALE_TARGET_RSS_MB;
    console.log(
      rss === undefined
        ? `\nOne worker never held 100 tasks at once (at most ${single.peakActive}; WORKER_CONCURRENCY ${s.workerConcurrency}): the RSS target (≤ ${SCALE_TARGET_RSS_MB} MB at 100) was not measured: FAIL`
        : `\nOne worker holding ≥ 100 tasks at once (at most ${single.peakActive}; up to ${Math.max(...Object.values(single.simPeak))} model calls open at the sim): largest RSS ${fixed(rss)} MB ` +
            `(target ≤ ${SCALE_TARGET_RSS_MB} MB): ${verdict(pass)}; largest over the whole step ${fixed(single.rssMb.get('worker-1') ?? Number.NaN)} MB`,
    );
  }
  const largest = steps.at(-1)!;
  const waits = largest.waits;
  const events = [...waits.byEvent.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8);
  console.log(
    `\nPostgres at ${largest.workers} workers: ${fixed(largest.activity.transactions / largest.tasks, 2)} transactions per task (a lower bound on statements), ` +
      `rows inserted ${fixed(largest.activity.rowsInserted / largest.tasks, 2)}, updated ${fixed(largest.activity.rowsUpdated / largest.tasks, 2)}, fetched ${fixed(largest.activity.rowsFetched / largest.tasks, 1)} per task; ` +
      `pg_stat_activity sampled ${waits.samples} times (every 100 ms): a platform backend waited on a lock in ${waits.samplesWithLockWait} samples ` +
      `(${fixed((waits.lockWaiters / Math.max(1, waits.samples)) * 1, 2)} lock waiters per sample on average)\n` +
      table(
        ['wait event of active platform backends', 'backend-samples'],
        events.map(([event, n]) => [event, fixed(n)]),
      ),
  );
  console.log(
    '\n' +
      table(
        ['workers', 'transactions / task', 'samples with a lock wait', 'lock waiters / sample'],
        steps.map((step) => [
          String(step.workers),
          fixed(step.activity.transactions / step.tasks, 2),
          `${step.waits.samplesWithLockWait} / ${step.waits.samples}`,
          fixed(step.waits.lockWaiters / Math.max(1, step.waits.samples), 2),
        ]),
      ),
  );
  const messages = [...new Set(steps.flatMap((step) => [...step.logs.keys()]))].sort();
  console.log(
    '\nWorker log lines per task in each step, by message (delays and retries show up here):\n' +
      table(
        ['message', ...steps.map((step) => `${step.workers} worker(s)`)],
        messages.map((m) => [m, ...steps.map((step) => fixed((step.logs.get(m) ?? 0) / step.tasks, 3))]),
      ),
  );
  console.log(`load average at end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  return { pass };
}
