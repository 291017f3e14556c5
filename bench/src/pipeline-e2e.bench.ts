import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { sleep } from '@switchyard/devkit';
import { selfTimeTables } from './support/cpu-profile';
import { fixed, heading, median, table, verdict } from './support/report';
import { Cleanup, benchPrefix, connectRedis, createBenchDatabase } from './support/resources';
import { activityBetween, settledDatabaseActivity, type DatabaseActivity } from './pipeline-e2e/database-activity';
import { secondsSince } from './pipeline/flow-helpers';
import { FlowDriver, closedLoop, type LoopTiming } from './pipeline-e2e/flows';
import { processCpuSeconds } from './support/cpu';
import { cpuBetween, readCpuCounters, type CpuWatch } from './pipeline-e2e/process-cpu';
import { e2eSettingsFromEnv, type E2eSettings } from './pipeline-e2e/settings';
import { APP_NAME_PREFIX, Platform, deletePlatformKeys, logMessagesSince, outputOffsets, startFlowWorker, startSim } from './pipeline-e2e/stack';
import { SwitchyardDriver } from './pipeline-e2e/switchyard-driver';

/**
 * Bench 8: the doc_review pipeline end to end, with real processes — the supervisor and two
 * workers started from the built apps, jobs submitted over REST, every model call made to
 * llm-sim (latency 0) through the router — against raw BullMQ flows of the same shape (no-op
 * worker processes) in the same run, alternating rounds. Beside them the floor: worker
 * processes that make the same model calls through the openai SDK, with no platform at all.
 * CPU per task per process from the processes' own counters, start-up excluded.
 */

/** Issue 12's bars: a quarter of raw BullMQ end to end; supervisor + workers ≤ 2 ms of CPU per task. */
export const E2E_TARGET_RATIO = 0.25;
export const E2E_TARGET_PLATFORM_CPU_US = 2_000;

type Side = 'raw' | 'switchyard' | 'floor';

interface Round {
  side: Side;
  label: string;
  tasks: number;
  timing: LoopTiming;
  /** CPU seconds in the round, by part (process, Postgres backends by owner, Redis). */
  cpu: Map<string, number>;
  /** The Switchyard workers' log lines in the round, by message. */
  logs: Map<string, number>;
}

export interface E2eSummary {
  pass: boolean;
  ratio: number;
  platformCpuUs: number;
}

const tasksPerSecond = (r: Round) => r.tasks / r.timing.seconds;

function describe(s: E2eSettings): string {
  const tasksPerJob = s.documents + 1;
  return [
    `doc_review jobs of ${s.documents} documents (${tasksPerJob} tasks: ${s.documents} extract + 1 synthesize), ${s.inFlight} jobs in flight (each lane submits, waits for the job's end, submits the next)`,
    `switchyard: POST /v1/jobs to the built supervisor; ${s.workers} built workers (WORKER_CONCURRENCY ${s.workerConcurrency}); every model call through the router to llm-sim at latency 0;`,
    `  the apps' defaults otherwise (pools of 16, info logging, telemetry SDK on, fleet limiter on); a job's end comes from the task table's own NOTIFY`,
    `raw BullMQ: FlowProducer flows of the same shape (parent + ${s.documents} children), ${s.workers} worker processes with no-op processors (concurrency ${s.rawConcurrency} per queue)`,
    `floor: the same flows, ${s.workers} worker processes whose processors make the agents' model calls through the openai SDK (our provider) to the sim, concurrency ${s.workerConcurrency}`,
    `per round: switchyard ${fixed(s.jobs)} jobs, raw ${fixed(s.rawJobs)}, floor ${fixed(s.floorJobs)}; ${s.rounds} rounds alternating raw / switchyard / floor after ${s.warmupJobs} untimed jobs per side (raw ${s.warmupJobs * 10})`,
    `CPU per task from /proc/<pid>/stat of every process and Postgres backend (by application_name), Redis INFO cpu (server-wide); start-up excluded`,
  ].join('\n');
}

export async function runPipelineE2eBench(s: E2eSettings = e2eSettingsFromEnv()): Promise<E2eSummary> {
  heading('Bench 8: doc_review end to end (real processes) vs raw BullMQ flows');
  console.log(describe(s));
  console.log(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const cleanup = new Cleanup();
  const onSignal = () => void cleanup.runAll().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-e2e-'));
    cleanup.add('temp dir', async () => rmSync(dir, { recursive: true, force: true }));
    const dbUrl = await createBenchDatabase(cleanup);
    const database = new URL(dbUrl).pathname.slice(1);
    const prefix = benchPrefix();
    cleanup.add(`redis keys of ${prefix}`, () => deletePlatformKeys(prefix));

    const sim = await startSim(dir, cleanup, 0);
    const platform = await Platform.start({ dbUrl, prefix, sim, dir, runningJobs: Math.max(64, s.inFlight), workerEnv: { WORKER_CONCURRENCY: String(s.workerConcurrency) } }, cleanup);
    for (let i = 0; i < s.workers; i += 1) await platform.startWorker();
    const raws = [];
    const floors = [];
    for (let i = 1; i <= s.workers; i += 1) {
      raws.push(await startFlowWorker(cleanup, `raw-${i}`, 'noop', `${prefix}:raw`, s.rawConcurrency, sim));
      floors.push(await startFlowWorker(cleanup, `floor-${i}`, 'sdk', `${prefix}:floor`, s.workerConcurrency, sim));
    }

    const monitor = new Pool({ connectionString: dbUrl, max: 2, application_name: 'sy-bench-monitor' });
    cleanup.add('monitor pool', () => monitor.end());
    const monitorRedis = connectRedis('sy-bench-monitor');
    cleanup.add('monitor redis', async () => monitorRedis.disconnect());
    const switchyard = await SwitchyardDriver.start(platform.baseUrl, dbUrl);
    cleanup.add('switchyard driver', () => switchyard.close());
    const rawFlows = await FlowDriver.start(`${prefix}:raw`);
    cleanup.add('raw flow driver', () => rawFlows.close());
    const floorFlows = await FlowDriver.start(`${prefix}:floor`);
    cleanup.add('floor flow driver', () => floorFlows.close());

    const pids = new Map<string, number>([
      ['bench client', process.pid],
      ['llm-sim', sim.process.child.pid!],
      ['supervisor', platform.supervisor.child.pid!],
      ...platform.workers.map((w): [string, number] => [w.name, w.child.pid!]),
      ...[...raws, ...floors].map((w): [string, number] => [w.name, w.child.pid!]),
    ]);
    const watch: CpuWatch = { pids, pool: monitor, database, applicationPrefix: APP_NAME_PREFIX, redis: monitorRedis };
    const runs: Record<Side, { jobs: number; run: () => Promise<void> }> = {
      raw: { jobs: s.rawJobs, run: () => rawFlows.runJob(s.documents, s.jobTimeoutMs) },
      switchyard: { jobs: s.jobs, run: () => switchyard.runJob(s.documents, s.jobTimeoutMs) },
      floor: { jobs: s.floorJobs, run: () => floorFlows.runJob(s.documents, s.jobTimeoutMs) },
    };
    const measure = async (side: Side, label: string, jobs = runs[side].jobs): Promise<Round> => {
      const before = await readCpuCounters(watch);
      const offsets = outputOffsets(platform.workers);
      const timing = await closedLoop(jobs, s.inFlight, runs[side].run);
      const cpu = cpuBetween(before, await readCpuCounters(watch));
      return { side, label, tasks: jobs * (s.documents + 1), timing, cpu, logs: logMessagesSince(platform.workers, offsets) };
    };

    console.log('warming up every side (untimed) ...');
    await measure('raw', 'warm-up', s.warmupJobs * 10);
    await measure('switchyard', 'warm-up', s.warmupJobs);
    await measure('floor', 'warm-up', s.warmupJobs);
    // The quiet wait for the Postgres counters doubles as the measure of each process's idle CPU (timers, sweeper, probes).
    const quietFrom = await readCpuCounters(watch);
    const quietStart = process.hrtime.bigint();
    const activityBefore = await settledDatabaseActivity(monitor, database);
    const idle = { cpu: cpuBetween(quietFrom, await readCpuCounters(watch)), seconds: secondsSince(quietStart) };
    const rounds: Round[] = [];
    for (let r = 1; r <= s.rounds; r += 1) {
      for (const side of ['raw', 'switchyard', 'floor'] as const) {
        const round = await measure(side, `r${r}`);
        rounds.push(round);
        console.log(`  ${side} r${r}: ${fixed(tasksPerSecond(round))} tasks/s (${fixed(round.timing.seconds, 1)} s; load average ${loadavg()[0]!.toFixed(2)})`);
      }
    }
    const activity = activityBetween(activityBefore, await settledDatabaseActivity(monitor, database));
    await checkJobsSucceeded(monitor, switchyard.submitted);
    const summary = report(s, rounds, activity, idle);

    if (process.env.BENCH_PROFILE) await profileWorkers(s, platform, switchyard, dir);
    return summary;
  } finally {
    await cleanup.runAll();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

/** Every submitted job (warm-up included) ended in success, with every task of it. */
async function checkJobsSucceeded(pool: Pool, jobIds: readonly string[]): Promise<void> {
  const { rows } = await pool.query<{ roots_ok: number; tasks_not_ok: number }>(
    `select count(*) filter (where parent_task_id is null and status = 'success')::int as roots_ok,
            count(*) filter (where parent_task_id is not null and status <> 'success')::int as tasks_not_ok
       from agent_task_state where job_id = any($1::uuid[])`,
    [jobIds],
  );
  const row = rows[0]!;
  if (row.roots_ok !== jobIds.length || row.tasks_not_ok !== 0) {
    throw new Error(`${row.roots_ok}/${jobIds.length} switchyard jobs succeeded; ${row.tasks_not_ok} tasks not successful`);
  }
}

const us = (seconds: number, tasks: number) => (seconds * 1e6) / tasks;

/** Median over a side's rounds of µs per task of one part. */
function partPerTask(rounds: readonly Round[], part: string): number {
  return median(rounds.map((r) => us(r.cpu.get(part) ?? 0, r.tasks)));
}

function sumPerTask(rounds: readonly Round[], parts: readonly string[]): number {
  return median(rounds.map((r) => us(parts.reduce((sum, p) => sum + (r.cpu.get(p) ?? 0), 0), r.tasks)));
}

/** The parts each side's own work runs in (the other sides' processes idle meanwhile). */
function partsOf(side: Side, round: Round): string[] {
  const names = [...round.cpu.keys()];
  const own: Record<Side, (name: string) => boolean> = {
    raw: (n) => n.startsWith('raw-') || n === 'bench client' || n.startsWith('redis'),
    switchyard: (n) => n === 'supervisor' || n.startsWith('worker-') || n.startsWith('postgres') || n === 'llm-sim' || n.startsWith('redis') || n === 'bench client',
    floor: (n) => n.startsWith('floor-') || n === 'llm-sim' || n.startsWith('redis') || n === 'bench client',
  };
  return names.filter(own[side]);
}

/** CPU seconds by part over a quiet interval of `seconds`, when nothing was submitted. */
interface Idle {
  cpu: Map<string, number>;
  seconds: number;
}

function report(s: E2eSettings, rounds: readonly Round[], activity: DatabaseActivity, idle: Idle): E2eSummary {
  const idleRate = (part: string) => Math.max(0, idle.cpu.get(part) ?? 0) / idle.seconds;
  /** µs per task of a part with its idle rate over the round taken out: the cost the tasks themselves caused. */
  const busyPerTask = (sideRounds: readonly Round[], parts: readonly string[]) =>
    median(sideRounds.map((r) => us(parts.reduce((sum, p) => sum + (r.cpu.get(p) ?? 0) - idleRate(p) * r.timing.seconds, 0), r.tasks)));
  const of = (side: Side) => rounds.filter((r) => r.side === side);
  for (const side of ['raw', 'switchyard', 'floor'] as const) {
    const sideRounds = of(side);
    const parts = partsOf(side, sideRounds[0]!);
    console.log(
      `\n${side}: CPU µs per task by process (rounds; median; idle rate from ${fixed(idle.seconds, 1)} s with nothing submitted)\n` +
        table(
          ['part', ...sideRounds.map((r) => r.label), 'median', 'idle CPU ms/s', 'median, idle taken out'],
          [
            ['tasks/s', ...sideRounds.map((r) => fixed(tasksPerSecond(r))), fixed(median(sideRounds.map(tasksPerSecond))), '', ''],
            ...parts.map((part) => [
              part,
              ...sideRounds.map((r) => fixed(us(r.cpu.get(part) ?? 0, r.tasks))),
              fixed(partPerTask(sideRounds, part)),
              fixed(idleRate(part) * 1_000, 1),
              fixed(busyPerTask(sideRounds, [part])),
            ]),
            [
              'all of the above',
              ...sideRounds.map((r) => fixed(us(parts.reduce((sum, p) => sum + (r.cpu.get(p) ?? 0), 0), r.tasks))),
              fixed(sumPerTask(sideRounds, parts)),
              '',
              fixed(busyPerTask(sideRounds, parts)),
            ],
          ],
        ),
    );
  }
  const raw = median(of('raw').map(tasksPerSecond));
  const sy = median(of('switchyard').map(tasksPerSecond));
  const floor = median(of('floor').map(tasksPerSecond));
  const ratio = sy / raw;
  const platformParts = ['supervisor', ...[...of('switchyard')[0]!.cpu.keys()].filter((k) => k.startsWith('worker-'))];
  const workerParts = platformParts.filter((p) => p !== 'supervisor');
  const platformCpu = sumPerTask(of('switchyard'), platformParts);
  const workersCpu = sumPerTask(of('switchyard'), workerParts);
  const floorWorkersCpu = sumPerTask(of('floor'), [...of('floor')[0]!.cpu.keys()].filter((k) => k.startsWith('floor-')));
  const rawWorkersCpu = sumPerTask(of('raw'), [...of('raw')[0]!.cpu.keys()].filter((k) => k.startsWith('raw-')));
  const postgresCpu = sumPerTask(of('switchyard'), [...of('switchyard')[0]!.cpu.keys()].filter((k) => k.startsWith('postgres')));
  const ratioPass = ratio >= E2E_TARGET_RATIO;
  const cpuPass = platformCpu <= E2E_TARGET_PLATFORM_CPU_US;
  const syTasks = of('switchyard').reduce((sum, r) => sum + r.tasks, 0);
  console.log(
    '\n' +
      table(
        ['end to end (median of rounds)', 'value', 'target', 'verdict'],
        [
          ['raw BullMQ flows, tasks/s', fixed(raw), '', ''],
          ['switchyard, tasks/s', fixed(sy), '', ''],
          ['floor (SDK calls, no platform), tasks/s', fixed(floor), '', ''],
          ['ratio switchyard / raw', fixed(ratio, 3), `≥ ${E2E_TARGET_RATIO}`, verdict(ratioPass)],
          ['supervisor + workers, CPU µs per task', fixed(platformCpu), `≤ ${fixed(E2E_TARGET_PLATFORM_CPU_US)}`, verdict(cpuPass)],
          ['  the same, idle CPU of the processes taken out', fixed(busyPerTask(of('switchyard'), platformParts)), '', ''],
          ['  workers alone', fixed(workersCpu), '', ''],
          ['  floor workers (queue + SDK call, nothing else)', fixed(floorWorkersCpu), '', ''],
          ['  raw workers (queue only)', fixed(rawWorkersCpu), '', ''],
          ['Postgres backends of the platform, CPU µs per task', fixed(postgresCpu), '', ''],
        ],
      ),
  );
  console.log(
    `\nThe floor: a worker that only takes the queue job and makes the model call through the SDK spends ${fixed(floorWorkersCpu)} µs per task here; ` +
      `the Switchyard workers spend ${fixed(workersCpu)} µs, ${fixed(workersCpu / floorWorkersCpu, 1)}x. ` +
      `Of the 2 ms bar, ${fixed((floorWorkersCpu / E2E_TARGET_PLATFORM_CPU_US) * 100)} % is taken by the floor on this machine.`,
  );
  // What the target leaves the platform: the same cores must carry ratio × raw tasks/s, and the floor's
  // processes (queue, SDK call, sim, Redis, the client) already take their share of every task.
  const cores = cpus().length;
  const floorAllCpu = sumPerTask(of('floor'), partsOf('floor', of('floor')[0]!));
  const cpuAtTarget = (cores * 1_000_000) / (E2E_TARGET_RATIO * raw);
  console.log(
    `\nThe ceiling: with the model call made through the SDK and nothing else, the floor reaches ${fixed(floor / raw, 3)} of raw BullMQ here. ` +
      `At the target (${fixed(E2E_TARGET_RATIO * raw)} tasks/s on ${cores} cores) every process together may spend ${fixed(cpuAtTarget)} µs of CPU per task; ` +
      `the floor's processes spend ${fixed(floorAllCpu)} µs, which leaves ${fixed(cpuAtTarget - floorAllCpu)} µs per task for everything the platform adds ` +
      `(Postgres writes, the supervisor, routing); Switchyard's processes spend ${fixed(sumPerTask(of('switchyard'), partsOf('switchyard', of('switchyard')[0]!)))} µs in all.`,
  );
  console.log(
    `\nPostgres, over the ${s.rounds} switchyard rounds (${fixed(syTasks)} tasks; pg_stat_database of the bench database, so the idle timers of the stack during the other sides' rounds are included): ` +
      `${fixed(activity.transactions / syTasks, 2)} transactions per task (a lower bound on statements), rows inserted ${fixed(activity.rowsInserted / syTasks, 2)}, ` +
      `updated ${fixed(activity.rowsUpdated / syTasks, 2)}, deleted ${fixed(activity.rowsDeleted / syTasks, 2)}, fetched ${fixed(activity.rowsFetched / syTasks, 1)} per task`,
  );
  const logs = new Map<string, number>();
  for (const round of of('switchyard')) for (const [message, n] of round.logs) logs.set(message, (logs.get(message) ?? 0) + n);
  console.log(
    `\nSwitchyard workers' log lines per task over the ${s.rounds} rounds, by message:\n` +
      table(
        ['message', 'per task'],
        [...logs.entries()].sort((a, b) => b[1] - a[1]).map(([message, n]) => [message, fixed(n / syTasks, 3)]),
      ),
  );
  console.log(`load average at end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${cpus().length} cores`);
  return { pass: ratioPass && cpuPass, ratio, platformCpuUs: platformCpu };
}

/**
 * BENCH_PROFILE=1: the workers again, under --cpu-prof, for one warm-up and one measured
 * Switchyard round; self time after start-up (the workers idle 3 s after start, and the
 * summary starts after the first idle stretch of 2 s), per task, by package and by function.
 */
async function profileWorkers(s: E2eSettings, platform: Platform, switchyard: SwitchyardDriver, dir: string): Promise<void> {
  heading('Bench 8 profile (BENCH_PROFILE=1): the workers under --cpu-prof');
  const profileDir = join(dir, 'profiles');
  mkdirSync(profileDir);
  await platform.restartWorkers(['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
  await sleep(3_000);
  const jobs = s.warmupJobs + s.jobs;
  const workersCpu = () => platform.workers.reduce((sum, w) => sum + processCpuSeconds(w.child.pid!), 0);
  const cpuBefore = workersCpu();
  const timing = await closedLoop(jobs, s.inFlight, () => switchyard.runJob(s.documents, s.jobTimeoutMs));
  const cpuSeconds = workersCpu() - cpuBefore;
  await platform.stopWorkers();
  const files = readdirSync(profileDir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(profileDir, f));
  if (files.length === 0) throw new Error('the profiled workers wrote no .cpuprofile');
  const tasks = jobs * (s.documents + 1);
  const options = { afterIdleGapMs: 2_000 };
  // The profiler samples wall time whenever the thread is not idle, descheduled time included:
  // on a loaded machine its milliseconds overstate CPU, so shares are taken of the CPU measured.
  const cpuPerTaskUs = (cpuSeconds * 1e6) / tasks;
  const perTask = (share: number) => fixed(share * cpuPerTaskUs);
  console.log(
    `${files.length} worker profiles, ${fixed(tasks)} tasks at ${fixed(tasks / timing.seconds)} tasks/s while profiled; the workers' CPU (/proc) ${fixed(cpuPerTaskUs)} µs per task, ` +
      `split by the profiles' self-time shares after start-up (all workers together):\n` +
      selfTimeTables(files, options, 'task', perTask, { packages: 16, functions: 25 }),
  );
}
