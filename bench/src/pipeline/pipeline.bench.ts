import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfTimeByOwner } from '../support/cpu-profile';
import { fixed, heading, median, table, verdict } from '../support/report';
import { Cleanup, benchPrefix, createBenchDatabase, deleteKeys } from '../support/resources';
import type { RoundReply } from './round-child';
import { pipelineSettingsFromEnv, type PipelineSettings, type RoundRequest, type RoundResult } from './settings';
import { measureStatementCosts, printStatementCosts } from './statement-costs';

/** The issue's bar: the pipeline must reach a quarter of raw BullMQ flow throughput. */
export const PIPELINE_TARGET_RATIO = 0.25;

export interface PipelineSummary {
  raw: number;
  switchyard: number;
  ratio: number;
  pass: boolean;
  results: RoundResult[];
}

let running: ChildProcess | undefined;

/** Ends the round process, if one runs: SIGTERM (it cleans up after itself), SIGKILL after 10 s. */
async function stopRunningRound(): Promise<void> {
  const child = running;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export function runRoundProcess(request: RoundRequest, extra: { execArgv?: string[]; env?: Record<string, string> } = {}): Promise<RoundResult> {
  const child = fork(join(__dirname, 'round-child.js'), [JSON.stringify(request)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [...process.execArgv, ...(extra.execArgv ?? [])],
    env: { ...process.env, ...extra.env },
  });
  running = child;
  return new Promise<RoundResult>((resolve, reject) => {
    let reply: RoundReply | undefined;
    // The round enforces its own deadlines; this only catches a process that hangs anyway.
    const limitMs = 2 * request.settings.roundTimeoutMs + 30_000;
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`${request.side} round ${request.label} did not finish within ${limitMs} ms`));
    }, limitMs);
    child.on('message', (message: RoundReply) => {
      reply = message;
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      running = undefined;
      if (reply?.ok) resolve(reply.result);
      else reject(new Error(`${request.side} round ${request.label} failed: ${reply?.error ?? `process exited with ${code ?? signal}`}`));
    });
  });
}

function describe(s: PipelineSettings): string {
  return [
    `shape: doc_review-shaped jobs, each 1 parent + ${s.children} children; per measured round ${fixed(s.jobs)} jobs = ${fixed(s.jobs * (s.children + 1))} tasks`,
    `  (queue jobs) for switchyard, ${fixed(s.rawJobs)} jobs = ${fixed(s.rawJobs * (s.children + 1))} tasks for raw BullMQ (so its timed interval is not too short);`,
    `  ${s.rounds} measured rounds per side, alternating raw / switchyard; each round is a fresh Node process that first warms up`,
    `  for ${s.warmupSeconds} s, untimed (batches of ${s.warmupJobs} jobs)`,
    `raw BullMQ: FlowProducer + one Worker per queue (concurrency ${s.rawConcurrency}, own connection), no-op processors, job options: ${s.rawJobOptions}`,
    `switchyard: parseWorkflowSubmission → planWorkflowJob → JobRepository.createJobAdmitting (admitted by its insert when nothing waits,`,
    `  else queued and an admission pass) → enqueue the ready tasks`,
    `  (what POST /v1/jobs does; a pass at every job end too${process.env.BENCH_ADMISSION === 'off' ? '; BENCH_ADMISSION=off: no admission' : ''}), and Workers`,
    `  "extract" / "synthesize" (concurrency ${s.switchyardConcurrency}) running the worker app's processor logic → TaskRunner.run (the generic runtime):`,
    `  claim, checkpoint, complete in Postgres for every task; Postgres pools: supervisor ${s.poolSize} + worker ${s.poolSize}; telemetry and info logging on`,
    `  the model router is a stub that answers instantly with a valid summary: this measures orchestration overhead, not an LLM`,
    `both: ${s.submitConcurrency} submissions in flight; rate = queue jobs / seconds from the first add to the last parent's completion;`,
    `  producer and consumers share one process per side; the machine has ${cpus().length} cores, shared with Postgres and Redis`,
  ].join('\n');
}

export async function runPipelineBench(s: PipelineSettings = pipelineSettingsFromEnv()): Promise<PipelineSummary> {
  heading('Bench 1: doc_review pipeline throughput vs raw BullMQ flows');
  console.log(describe(s));

  const cleanup = new Cleanup();
  const onSignal = () => {
    // The round process first (it may still be writing keys), then the sweep and the database.
    void stopRunningRound()
      .then(() => cleanup.runAll())
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    // Each round deletes its own keys; this sweeps whatever a failed round left under the bench's prefix.
    const prefix = benchPrefix();
    cleanup.add(`redis keys ${prefix}*`, async () => {
      await deleteKeys(prefix);
    });

    const results: RoundResult[] = [];
    let dbUrl = '';
    for (let round = 1; round <= s.rounds; round += 1) {
      for (const side of ['raw', 'switchyard'] as const) {
        // Every switchyard round on a database of its own: this machine's Postgres never vacuums
        // (autovacuum=off), so a round on the database of the rounds before it read their dead
        // row versions, and ran up to 40 % slower than the first (docs/BENCHMARKS.md, bench 1, session 8).
        if (side === 'switchyard') dbUrl = await createBenchDatabase(cleanup);
        const result = await runRoundProcess({ side, label: `r${round}`, prefix, dbUrl, settings: s });
        console.log(`  ${side} r${round}: ${fixed(result.tasksPerSecond)} tasks/s`);
        results.push(result);
      }
    }
    const summary = report(s, results);
    if (process.env.BENCH_PROFILE) await profile(s, { prefix, dbUrl });
    return summary;
  } finally {
    await cleanup.runAll();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

function report(s: PipelineSettings, results: RoundResult[]): PipelineSummary {
  const perTask = (seconds: number, r: RoundResult) => fixed((seconds * 1e6) / r.queueJobs);
  console.log(
    '\n' +
      table(
        ['round', 'side', 'tasks', 'seconds', 'tasks/s', 'CPU µs/task: node', 'postgres', 'redis', 'PG statements/task'],
        results.map((r) => [
          r.label,
          r.side,
          fixed(r.queueJobs),
          fixed(r.seconds, 2),
          fixed(r.tasksPerSecond),
          perTask(r.cpu.node, r),
          r.side === 'raw' ? '-' : perTask(r.cpu.postgres, r),
          perTask(r.cpu.redis, r),
          r.queries === undefined ? '-' : fixed(r.queries / r.queueJobs, 2),
        ]),
      ),
  );
  console.log(
    'CPU per task: the round process (producer + workers), the bench database\'s Postgres backends, the Redis server (server-wide).',
  );

  const raw = median(results.filter((r) => r.side === 'raw').map((r) => r.tasksPerSecond));
  const sy = median(results.filter((r) => r.side === 'switchyard').map((r) => r.tasksPerSecond));
  const ratio = sy / raw;
  const pass = ratio >= PIPELINE_TARGET_RATIO;
  // What the rates cost: CPU per task (process + its Postgres backends + Redis), and cores kept busy.
  const ofSide = (side: RoundResult['side'], f: (r: RoundResult) => number) => median(results.filter((r) => r.side === side).map(f));
  const cpuPerTask = (r: RoundResult) => (r.cpu.node + r.cpu.postgres + r.cpu.redis) / r.queueJobs;
  const rawCpu = ofSide('raw', cpuPerTask);
  const syCpu = ofSide('switchyard', cpuPerTask);
  const syNode = ofSide('switchyard', (r) => r.cpu.node / r.queueJobs);
  const rawCores = ofSide('raw', (r) => cpuPerTask(r) * r.tasksPerSecond);
  const syCores = ofSide('switchyard', (r) => cpuPerTask(r) * r.tasksPerSecond);
  const cores = cpus().length;
  const needed = PIPELINE_TARGET_RATIO * raw;
  console.log(
    '\n' +
      table(
        ['median of rounds', 'tasks/s'],
        [
          ['raw BullMQ flows', fixed(raw)],
          ['switchyard pipeline', fixed(sy)],
          [`ratio switchyard / raw (target ≥ ${PIPELINE_TARGET_RATIO})`, `${fixed(ratio, 3)} ${verdict(pass)}`],
        ],
      ),
  );
  const us = (seconds: number) => `${fixed(seconds * 1e6)} µs`;
  console.log(
    [
      '',
      `CPU per task, all parts (median): raw ${us(rawCpu)} (${fixed(rawCores, 2)} cores busy), switchyard ${us(syCpu)} ` +
        `(${fixed(syCores, 2)} cores busy): ${fixed(syCpu / rawCpu, 1)}x.`,
      `At that cost, all ${cores} cores would carry at most ${fixed(cores / syCpu)} switchyard tasks/s; the target needs ${fixed(needed)} tasks/s, ` +
        `i.e. ≤ ${us(cores / needed)} of CPU per task in all, and ≤ ${us(1 / needed)} in the Node process (one thread; now ${us(syNode)}).`,
    ].join('\n'),
  );

  // Where the Postgres round trips go (last switchyard round).
  const last = results.filter((r) => r.side === 'switchyard').at(-1);
  if (last?.queryKinds) {
    const kinds = [...last.queryKinds].sort((a, b) => b[1] - a[1]);
    console.log(
      `\nPostgres statements per doc_review job (${s.children + 1} tasks), round ${last.label}:\n` +
        table(
          ['statement', 'per job', 'per task'],
          [
            ...kinds.map(([kind, n]) => [kind, fixed(n / last.jobs, 2), fixed(n / last.queueJobs, 2)]),
            ['total', fixed((last.queries ?? 0) / last.jobs, 2), fixed((last.queries ?? 0) / last.queueJobs, 2)],
          ],
        ),
    );
  }
  return { raw, switchyard: sy, ratio, pass, results };
}

/**
 * BENCH_PROFILE=1: where the switchyard side's time goes. The cost of each hot-path
 * statement; a round without telemetry and logging; a round under the V8 CPU profiler.
 */
async function profile(s: PipelineSettings, where: { prefix: string; dbUrl: string }): Promise<void> {
  heading('Bench 1 profile (BENCH_PROFILE=1)');
  printStatementCosts(await measureStatementCosts(where.dbUrl));

  // Alternating pairs, so both variants see the same machine weather.
  const variants: RoundResult[] = [];
  for (let pair = 1; pair <= 2; pair += 1) {
    variants.push(await runRoundProcess({ side: 'switchyard', label: `shipped-${pair}`, ...where, settings: s }));
    variants.push(
      await runRoundProcess(
        { side: 'switchyard', label: `lean-${pair}`, ...where, settings: s },
        { env: { BENCH_SY_TELEMETRY: 'off', BENCH_SY_LOG_LEVEL: 'silent' } },
      ),
    );
  }
  const perTask = (seconds: number, r: RoundResult) => fixed((seconds * 1e6) / r.queueJobs);
  console.log(
    '\nSwitchyard rounds as shipped (OpenTelemetry SDK started, info logging) and lean (neither), alternating:\n' +
      table(
        ['round', 'tasks/s', 'CPU µs/task: node', 'postgres', 'redis'],
        variants.map((r) => [r.label, fixed(r.tasksPerSecond), perTask(r.cpu.node, r), perTask(r.cpu.postgres, r), perTask(r.cpu.redis, r)]),
      ),
  );

  const dir = mkdtempSync(join(tmpdir(), 'sy-bench-prof-'));
  try {
    const profiled = await runRoundProcess({ side: 'switchyard', label: 'profiled', ...where, settings: s }, { execArgv: ['--cpu-prof', '--cpu-prof-dir', dir] });
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error('the profiled round wrote no .cpuprofile');
    const owners = selfTimeByOwner(join(dir, file));
    console.log(
      `\nSwitchyard round process under --cpu-prof (${fixed(profiled.tasksPerSecond)} tasks/s while profiled; whole process life, ` +
        `warm-up included; self time by package, idle excluded; "native writev" is mostly socket writes to Postgres):\n` +
        table(
          ['package / part', 'self ms', 'share'],
          owners.slice(0, 18).map((o) => [o.owner, fixed(o.ms), `${fixed(o.share * 100, 1)} %`]),
        ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
