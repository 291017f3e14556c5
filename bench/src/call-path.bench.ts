import { fork } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallRoundReply } from './call-path/call-child';
import { CALL_PATH_VARIANTS, callPathSettingsFromEnv, type CallPathSettings, type CallPathVariant, type CallRoundRequest, type CallRoundResult } from './call-path/settings';
import { startSim } from './crash-resume/processes';
import { selfTimeByFunction, selfTimeByOwner } from './support/cpu-profile';
import { fixed, heading, median, table } from './support/report';
import { Cleanup, benchPrefix, createBenchDatabase, deleteKeys } from './support/resources';

/**
 * Bench 11: the CPU one model call costs the worker process, end to end against llm-sim at
 * zero latency, layer by layer: the bare `openai` SDK (the floor), the worker's Router, and
 * the whole call step as a task runs it (traced, paid-once, ledgered). Every round is a fresh
 * process; the variants alternate so each sees the same machine weather.
 * BENCH_PROFILE=1 adds a round of the `worker` variant (BENCH_PROFILE=sdk|router: that variant) under the
 * V8 CPU profiler; BENCH_PROFILE_KEEP=<file> keeps its .cpuprofile.
 */
export interface CallPathSummary {
  /** Median CPU µs per call of the round process, by variant run. */
  nodeUs: Partial<Record<CallPathVariant, number>>;
  results: CallRoundResult[];
  pass: boolean;
}

function runCallRound(request: CallRoundRequest): Promise<CallRoundResult> {
  const child = fork(join(__dirname, 'call-path/call-child.js'), [JSON.stringify(request)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise<CallRoundResult>((resolve, reject) => {
    let reply: CallRoundReply | undefined;
    const limitMs = 300_000;
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`${request.variant} round ${request.label} did not finish within ${limitMs} ms`));
    }, limitMs);
    child.on('message', (message: CallRoundReply) => {
      reply = message;
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (reply?.ok) resolve(reply.result);
      else reject(new Error(`${request.variant} round ${request.label} failed: ${reply?.error ?? `process exited with ${code ?? signal}`}`));
    });
  });
}

function describe(s: CallPathSettings): string {
  return [
    `variants: ${s.variants.join(', ')} (BENCH_CALL_VARIANTS)`,
    `${s.rounds} rounds × ${s.calls} timed calls per variant (after ${s.warmupCalls} untimed), ${s.concurrency} in flight; each round a fresh process;`,
    `  every call is the doc_review extract step's (JSON mode, max 512 output tokens) over a ${s.documentChars}-character document (64 different ones);`,
    `  llm-sim at zero latency in its own process; the shipped router config pointed at it; OpenTelemetry SDK started, info logging to /dev/null`,
    `sdk: bare openai SDK, one client, streamed with usage as the router streams | router: the worker's Router.chat (routerProvider: Redis fleet`,
    `  limiter and retry budget, tenant budget filter, ledger + metrics observers) | worker: runCallStep through the traced, paid-once router`,
    `  (IdempotentModelRouter: result store + attempt ledger in Postgres, group-committed), as TaskRunner runs a call step |`,
    `  worker-per-call: the same with one statement per call for each write and every input tokenized exactly (as before)`,
  ].join('\n');
}

export async function runCallPathBench(s: CallPathSettings = callPathSettingsFromEnv()): Promise<CallPathSummary> {
  heading('Bench 11: model-call path CPU per call (bare SDK vs router vs the worker\'s call step)');
  console.log(describe(s));
  const cleanup = new Cleanup();
  // Ctrl-C: the round process cleans up after itself; then the sim, the database and the keys.
  const onSignal = () => {
    void cleanup.runAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const dir = mkdtempSync(join(tmpdir(), 'sy-call-path-'));
  cleanup.add('temp dir', async () => rmSync(dir, { recursive: true, force: true }));
  try {
    const sim = await startSim(dir);
    cleanup.add('llm-sim', () => sim.process.stop());
    const dbUrl = await createBenchDatabase(cleanup);
    const prefix = benchPrefix();
    cleanup.add(`redis keys ${prefix}*`, () => deleteKeys(prefix));
    const where = { dbUrl, prefix, routerConfig: sim.routerConfig, settings: s };

    const results: CallRoundResult[] = [];
    for (let round = 1; round <= s.rounds; round += 1) {
      for (const variant of s.variants) {
        const result = await runCallRound({ ...where, variant, label: `r${round}` });
        console.log(`  ${variant} r${round}: ${fixed((result.cpu.node * 1e6) / result.calls)} µs/call`);
        results.push(result);
      }
    }
    const summary = report(results, s.variants);
    const profiled = process.env.BENCH_PROFILE;
    if (profiled) {
      const variant = (CALL_PATH_VARIANTS as readonly string[]).includes(profiled) ? (profiled as CallPathVariant) : 'worker';
      await profile({ ...where, variant, label: 'profiled', profileFile: join(dir, `${variant}.cpuprofile`) });
    }
    return summary;
  } finally {
    await cleanup.runAll();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

function report(results: CallRoundResult[], variants: readonly CallPathVariant[]): CallPathSummary {
  const perCall = (seconds: number, r: CallRoundResult) => (seconds * 1e6) / r.calls;
  console.log(
    '\n' +
      table(
        ['round', 'variant', 'calls', 'calls/s', 'CPU µs/call: node', 'postgres', 'redis', 'PG statements/call'],
        results.map((r) => [
          r.label,
          r.variant,
          fixed(r.calls),
          fixed(r.calls / r.seconds),
          fixed(perCall(r.cpu.node, r)),
          fixed(perCall(r.cpu.postgres, r)),
          fixed(perCall(r.cpu.redis, r)),
          fixed(r.queries / r.calls, 2),
        ]),
      ),
  );
  const of = (variant: CallPathVariant, f: (r: CallRoundResult) => number) => median(results.filter((r) => r.variant === variant).map(f));
  const nodeUs: Partial<Record<CallPathVariant, number>> = Object.fromEntries(variants.map((v) => [v, of(v, (r) => perCall(r.cpu.node, r))]));
  const sdk = nodeUs.sdk;
  console.log(
    '\n' +
      table(
        ['median of rounds', 'node µs/call', 'over the bare SDK', 'postgres µs/call', 'redis µs/call'],
        variants.map((v) => [
          v,
          fixed(nodeUs[v]!),
          v === 'sdk' || sdk === undefined ? '-' : `${nodeUs[v]! >= sdk ? '+' : '−'}${fixed(Math.abs(nodeUs[v]! - sdk))} µs (${fixed(nodeUs[v]! / sdk, 2)}x)`,
          fixed(of(v, (r) => perCall(r.cpu.postgres, r))),
          fixed(of(v, (r) => perCall(r.cpu.redis, r))),
        ]),
      ),
  );
  console.log('Postgres: the bench database\'s backends; Redis: server-wide (other clients of the shared Redis count too).');
  // A measurement to read, not a target of its own: the pipeline and end-to-end benches carry the per-task targets.
  return { nodeUs, results, pass: true };
}

/** One round of `request` with its timed calls under the V8 CPU profiler: the top self-time packages and functions, per call. */
async function profile(request: CallRoundRequest & { profileFile: string }): Promise<void> {
  heading(`Bench 11 profile (BENCH_PROFILE): the timed calls of one ${request.variant}-variant round under the V8 CPU profiler`);
  const result = await runCallRound(request);
  // Shares of the sampled busy time, scaled to the round's measured CPU per call (the profiler adds its own overhead).
  const nodeUsPerCall = (result.cpu.node * 1e6) / result.calls;
  const usPerCall = (share: number) => fixed(share * nodeUsPerCall, 1);
  const owners = selfTimeByOwner(request.profileFile);
  const functions = selfTimeByFunction([request.profileFile]);
  if (process.env.BENCH_PROFILE_KEEP) copyFileSync(request.profileFile, process.env.BENCH_PROFILE_KEEP);
  console.log(
    `\nSelf time by package (shares of the profiled calls' busy time; µs/call = share × ${fixed(nodeUsPerCall)} µs, the round's CPU per call):\n` +
      table(
        ['package / part', 'share', '≈ µs/call'],
        owners.slice(0, 14).map((o) => [o.owner, `${fixed(o.share * 100, 1)} %`, usPerCall(o.share)]),
      ),
  );
  console.log(
    '\nTop self-time functions:\n' +
      table(
        ['function (package, file:line)', 'share', '≈ µs/call'],
        functions.slice(0, 25).map((f) => [f.key, `${fixed(f.share * 100, 1)} %`, usPerCall(f.share)]),
      ),
  );
}
