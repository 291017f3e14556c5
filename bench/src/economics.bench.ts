import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { YAMLMap, YAMLSeq, parse, parseDocument } from 'yaml';
import { ManagedProcess, SIM_TARGETS, freePort, simPorts, simTargetsEnv, sleep, writeRouterConfigForSim } from '@switchyard/devkit';
import { loadWorkload, repeatedBodies, waves, type WorkloadLine } from './economics/workload';
import { postJson } from './support/http';
import { Cleanup, REDIS_URL, benchPrefix, createBenchDatabase, deleteKeys } from './support/resources';
import { fixed, heading, percentile, table, verdict } from './support/report';

/**
 * Economics: the shipped mixed workload (bench/fixtures/economics-workload.jsonl, 1,000 requests)
 * sent through the gateway of a real supervisor against llm-sim, once per router config, in one
 * run: the shipped config/router.yaml (hybrid), the same with its response cache switched on, and
 * all-cloud (same targets, every route sent to the cloud target). Cost is the ledger's (the
 * router prices every call from the config). Target: hybrid ≤ 20 % of all-cloud, and no
 * sensitive request answered by a cloud target.
 */

export const COST_RATIO_TARGET = 0.2;

/** Base response latency per sim target (ms before the reply starts): local GPUs next door answer first, the cloud API after a WAN round trip and its queue. */
const SIM_LATENCY_MS: Record<string, number> = { local_vllm_7b: 40, local_vllm_32b: 90, cloud_main: 350 };
const CONCURRENCY = Number(process.env.BENCH_ECONOMICS_CONCURRENCY ?? 16);

interface TargetInfo {
  type: 'local' | 'cloud';
  input: number;
  output: number;
}

interface Outcome {
  line: WorkloadLine;
  status: number;
  target?: string;
  source?: string;
  /** `x-switchyard-inferred`: what the inferred-meta classifier guessed, e.g. `task_type=code(0.210)`. */
  inferred?: string;
  ms: number;
  error?: string;
}

interface LedgerRow {
  target: string;
  calls: number;
  cost: number;
  inputTokens: number;
  outputTokens: number;
}

interface SideResult {
  name: string;
  outcomes: Outcome[];
  /** From /metrics `switchyard_router_coalesced_calls_total`; undefined when this build has no coalescing. */
  coalescing?: { leaders: number; followers: number };
  ledger: LedgerRow[];
  cost: number;
  wallS: number;
}


async function send(agent: Agent, port: number, line: WorkloadLine): Promise<Outcome> {
  const t0 = process.hrtime.bigint();
  try {
    const reply = await postJson({ port, path: '/v1/chat/completions', agent }, JSON.stringify(line.body));
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const header = (name: string) => (typeof reply.headers[name] === 'string' ? reply.headers[name] : undefined);
    return { line, status: reply.status, target: header('x-switchyard-target'), source: header('x-switchyard-source'), inferred: header('x-switchyard-inferred'), ms, ...(reply.status === 200 ? {} : { error: reply.body.slice(0, 200) }) };
  } catch (error) {
    return { line, status: 0, ms: Number(process.hrtime.bigint() - t0) / 1e6, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The workload in file order, CONCURRENCY waves in flight; a burst's identical requests leave together. */
async function runWorkload(port: number, lines: readonly WorkloadLine[]): Promise<Outcome[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY * 3 });
  const queue = waves(lines);
  const outcomes: Outcome[] = [];
  const worker = async () => {
    for (let wave = queue.shift(); wave !== undefined; wave = queue.shift()) {
      outcomes.push(...(await Promise.all(wave.map((line) => send(agent, port, line)))));
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  agent.destroy();
  return outcomes;
}

/** Gateway ledger rows per target, once the off-hot-path writer has caught up (the count stops moving). */
async function readLedger(dbUrl: string, expectAtLeast: number): Promise<LedgerRow[]> {
  const pool = new Pool({ connectionString: dbUrl, max: 1 });
  try {
    const query = async () =>
      (
        await pool.query<{ target: string; calls: string; cost: string; input: string; output: string }>(
          `/* bench economics */ select target, count(*) as calls, coalesce(sum(cost_usd), 0) as cost, coalesce(sum(input_tokens), 0) as input, coalesce(sum(output_tokens), 0) as output
             from model_call_ledger where source = 'gateway' group by target order by target`,
        )
      ).rows.map((r) => ({ target: r.target, calls: Number(r.calls), cost: Number(r.cost), inputTokens: Number(r.input), outputTokens: Number(r.output) }));
    let rows = await query();
    const deadline = Date.now() + 20_000;
    for (;;) {
      await sleep(1_000);
      const next = await query();
      const total = (rs: LedgerRow[]) => rs.reduce((n, r) => n + r.calls, 0);
      if ((total(next) === total(rows) && total(next) >= expectAtLeast) || Date.now() > deadline) return next;
      rows = next;
    }
  } finally {
    await pool.end();
  }
}

/** Every route sent to the cloud target(s); everything else (targets, prices, cache) as shipped. */
function allCloud(cloudTargets: readonly string[]) {
  return (text: string): string => {
    const doc = parseDocument(text);
    const routes = doc.getIn(['router', 'routes']);
    if (!(routes instanceof YAMLSeq)) throw new Error('config/router.yaml: router.routes is not a list');
    for (const route of routes.items) {
      if (!(route instanceof YAMLMap)) continue;
      route.delete('targets');
      if (cloudTargets.length === 1) route.set('target', cloudTargets[0]);
      else {
        route.delete('target');
        route.set('targets', cloudTargets);
      }
    }
    return doc.toString();
  };
}

/** The response cache on, and coalescing too when this build's config has it (shipped off). */
function withCacheAndCoalescing(text: string): string {
  const doc = parseDocument(text);
  doc.setIn(['response_cache', 'enabled'], true);
  if (doc.hasIn(['router', 'coalescing'])) doc.setIn(['router', 'coalescing', 'enabled'], true);
  return doc.toString();
}

/** Leader and follower counts of the supervisor's coalesced calls, or undefined when it exports none. */
async function coalescingStats(port: number): Promise<{ leaders: number; followers: number } | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const value = (role: string) => Number(new RegExp(`^switchyard_router_coalesced_calls_total\\{[^}]*role="${role}"[^}]*\\} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  const leaders = value('leader');
  const followers = value('follower');
  return Number.isNaN(leaders) && Number.isNaN(followers) ? undefined : { leaders: leaders || 0, followers: followers || 0 };
}

function targetsOf(configFile: string): Record<string, TargetInfo> {
  const config = parse(readFileSync(configFile, 'utf8')) as { router: { targets: { name: string; type: 'local' | 'cloud'; cost_per_1k_tokens: { input: number; output: number } }[] } };
  return Object.fromEntries(config.router.targets.map((t) => [t.name, { type: t.type, input: t.cost_per_1k_tokens.input, output: t.cost_per_1k_tokens.output }]));
}

async function runSide(name: string, routerConfig: string, lines: readonly WorkloadLine[], cleanup: Cleanup): Promise<SideResult> {
  const dbUrl = await createBenchDatabase(cleanup);
  const prefix = benchPrefix();
  cleanup.add(`queue keys ${prefix}`, async () => void (await deleteKeys(prefix)));
  const port = await freePort();
  const supervisor = ManagedProcess.start('supervisor', { DATABASE_URL: dbUrl, REDIS_URL, QUEUE_PREFIX: prefix, ROUTER_CONFIG: routerConfig, PORT: String(port), LOG_LEVEL: 'info' }, `supervisor-${name}`);
  try {
    await supervisor.waitForLine(/supervisor listening/, 90_000);
    const started = Date.now();
    const outcomes = await runWorkload(port, lines);
    const wallS = (Date.now() - started) / 1000;
    const coalescing = await coalescingStats(port);
    const upstream = outcomes.filter((o) => o.status === 200 && o.source === 'upstream').length;
    const ledger = await readLedger(dbUrl, upstream);
    return { name, outcomes, ...(coalescing ? { coalescing } : {}), ledger, cost: ledger.reduce((sum, r) => sum + r.cost, 0), wallS };
  } finally {
    await supervisor.stop();
  }
}

function describeCoalescing(stats: SideResult['coalescing']): string {
  if (stats === undefined) return 'not in this build (no switchyard_router_coalesced_calls_total)';
  const calls = stats.leaders + stats.followers;
  if (calls === 0) return 'off (no coalescable call made)';
  return `${share(stats.followers, calls)} of coalescable calls shared one in flight (${stats.followers} followers, ${stats.leaders} leaders)`;
}

const share = (part: number, whole: number) => (whole === 0 ? 'n/a' : `${fixed((100 * part) / whole, 1)} %`);
const usd = (value: number) => `$${value.toFixed(4)}`;

function report(side: SideResult, targets: Record<string, TargetInfo>): void {
  const ok = side.outcomes.filter((o) => o.status === 200);
  const failed = side.outcomes.filter((o) => o.status !== 200);
  const bySource = new Map<string, number>();
  for (const o of ok) bySource.set(o.source ?? '(none)', (bySource.get(o.source ?? '(none)') ?? 0) + 1);
  const cacheHits = bySource.get('cache') ?? 0;
  const repeats = repeatedBodies(side.outcomes.map((o) => o.line));
  const sensitiveOnCloud = ok.filter((o) => o.line.sensitive && o.target !== undefined && targets[o.target]?.type === 'cloud').length;
  const calls = side.ledger.reduce((n, r) => n + r.calls, 0);
  console.log(`\n--- ${side.name}: ${side.outcomes.length} requests in ${fixed(side.wallS, 1)} s, ${ok.length} answered, ${failed.length} failed; cost ${usd(side.cost)} (ledger, ${calls} upstream calls)`);
  for (const f of failed.slice(0, 3)) console.log(`    failed #${f.line.id}: status ${f.status} ${f.error ?? ''}`);
  console.log(
    table(
      ['target', 'type', 'upstream calls', 'share', 'input tok', 'output tok', 'cost', 'answers p50 ms', 'answers p95 ms'],
      side.ledger.map((r) => {
        const answered = ok.filter((o) => o.target === r.target && o.source === 'upstream').map((o) => o.ms);
        return [r.target, targets[r.target]?.type ?? '?', fixed(r.calls), share(r.calls, calls), fixed(r.inputTokens), fixed(r.outputTokens), usd(r.cost), fixed(percentile(answered, 50)), fixed(percentile(answered, 95))];
      }),
    ),
  );
  const noMeta = ok.filter((o) => o.line.body.metadata.task_type === undefined);
  const noMetaTargets = [...new Set(noMeta.map((o) => o.target ?? '?'))].map((t) => `${t} ${noMeta.filter((o) => o.target === t).length}`).join(', ');
  // The fixture knows each request's real task: score the classifier's applied task_type guesses against it.
  const guessed = noMeta.filter((o) => o.inferred !== undefined);
  const applied = guessed.map((o) => ({ o, task: /task_type=(\w+)\([^)]*\)(?!:not_applied)/.exec(o.inferred!)?.[1] })).filter((g) => g.task !== undefined);
  const right = applied.filter((g) => g.task === g.o.line.task).length;
  console.log(
    `inferred meta (x-switchyard-inferred) on ${guessed.length} of the ${noMeta.length} answers without task_type${noMeta.length > 0 && guessed.length === 0 ? ' (classifier off or absent in this build)' : ''}; task_type applied on ${applied.length}, matching the fixture's task on ${right} (${share(right, applied.length)})`,
  );
  console.log(
    `answers by source: ${[...bySource].map(([s, n]) => `${s} ${n}`).join(', ')} | cache hit rate ${share(cacheHits, ok.length)} of answers (${share(cacheHits, repeats)} of the ${repeats} requests whose body came earlier in the workload) | coalescing ${describeCoalescing(side.coalescing)}`,
  );
  console.log(`latency (client, all answers): p50 ${fixed(percentile(ok.map((o) => o.ms), 50))} ms, p95 ${fixed(percentile(ok.map((o) => o.ms), 95))} ms | requests without task_type went to: ${noMetaTargets}`);
  console.log(`sensitive requests answered by a cloud target: ${sensitiveOnCloud} of ${ok.filter((o) => o.line.sensitive).length}: ${verdict(sensitiveOnCloud === 0)}`);
}

export async function runEconomicsBench(): Promise<{ pass: boolean }> {
  heading('Bench: economics (hybrid routing vs all-cloud, shipped workload through the gateway)');
  const lines = loadWorkload();
  const count = (f: (l: WorkloadLine) => boolean) => lines.filter(f).length;
  console.log(
    `workload: ${lines.length} requests (${count((l) => l.repeat_of !== undefined)} planned exact repeats, ${count((l) => l.burst !== undefined)} of them in concurrent bursts, ${repeatedBodies(lines)} bodies seen before in all; ${count((l) => l.sensitive)} sensitive; ${count((l) => l.lang === 'zh')} Chinese; ${count((l) => l.body.metadata.task_type === undefined)} without task_type) | ${CONCURRENCY} in flight | llm-sim base latency ${Object.entries(SIM_LATENCY_MS).map(([t, ms]) => `${t} ${ms} ms`).join(', ')}`,
  );
  const cleanup = new Cleanup();
  const onSignal = () => void cleanup.runAll().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-economics-'));
  cleanup.add('temp dir', async () => rmSync(dir, { recursive: true, force: true }));
  try {
    const { targets: ports, control: controlPort } = await simPorts();
    const sim = ManagedProcess.start('llm-sim', { LLM_SIM_TARGETS: simTargetsEnv(ports, SIM_TARGETS.map((t) => SIM_LATENCY_MS[t.name] ?? 0)), LLM_SIM_CONTROL_PORT: String(controlPort) });
    cleanup.add('llm-sim', () => sim.stop());
    await sim.waitForLine(/llm-sim listening/, 30_000);

    const configIn = (name: string, edit?: (yaml: string) => string) => {
      mkdirSync(join(dir, name));
      return writeRouterConfigForSim(join(dir, name), ports, edit);
    };
    const shipped = configIn('hybrid');
    const targets = targetsOf(shipped);
    const cloud = Object.keys(targets).filter((t) => targets[t]!.type === 'cloud');
    const sides: [string, string][] = [
      ['hybrid (shipped router.yaml)', shipped],
      ['hybrid + response cache (+ coalescing) on', configIn('hybrid-cache', withCacheAndCoalescing)],
      [`all-cloud (every route → ${cloud.join(', ')})`, configIn('all-cloud', allCloud(cloud))],
    ];
    const results: SideResult[] = [];
    for (const [name, file] of sides) {
      const result = await runSide(name, file, lines, cleanup);
      results.push(result);
      report(result, targets);
    }
    const [hybrid, cached, cloudOnly] = results as [SideResult, SideResult, SideResult];
    // What sending everything to the cloud would cost: the all-cloud run's sensitive calls stayed local (the router never sends them out); price their tokens at the cloud's rates too.
    const cloudPrice = targets[cloud[0]!]!;
    const localInAllCloud = cloudOnly.ledger.filter((r) => targets[r.target]?.type === 'local');
    const everythingAtCloud =
      cloudOnly.cost + localInAllCloud.reduce((sum, r) => sum + (r.inputTokens * cloudPrice.input + r.outputTokens * cloudPrice.output) / 1000 - r.cost, 0);
    const ratio = hybrid.cost / cloudOnly.cost;
    const sensitiveOnCloud = results.flatMap((r) => r.outcomes).filter((o) => o.status === 200 && o.line.sensitive && o.target !== undefined && targets[o.target]?.type === 'cloud').length;
    const allAnswered = results.every((r) => r.outcomes.every((o) => o.status === 200));
    console.log('');
    console.log(
      table(
        ['config', 'cost', 'vs all-cloud', 'cloud share of calls', 'cache hits', 'p50 ms', 'p95 ms'],
        results.map((r) => {
          const ok = r.outcomes.filter((o) => o.status === 200);
          const calls = r.ledger.reduce((n, row) => n + row.calls, 0);
          const cloudCalls = r.ledger.filter((row) => targets[row.target]?.type === 'cloud').reduce((n, row) => n + row.calls, 0);
          return [r.name, usd(r.cost), share(r.cost, cloudOnly.cost), share(cloudCalls, calls), share(ok.filter((o) => o.source === 'cache').length, ok.length), fixed(percentile(ok.map((o) => o.ms), 50)), fixed(percentile(ok.map((o) => o.ms), 95))];
        }),
      ),
    );
    console.log(`\nall-cloud with the sensitive calls priced at cloud rates too (no router at all): ${usd(everythingAtCloud)}; hybrid is ${share(hybrid.cost, everythingAtCloud)} of that, hybrid + cache ${share(cached.cost, everythingAtCloud)}`);
    const pass = ratio <= COST_RATIO_TARGET && sensitiveOnCloud === 0 && allAnswered;
    console.log(`cost ratio hybrid / all-cloud ${(ratio * 100).toFixed(1)} % vs target ≤ ${COST_RATIO_TARGET * 100} %: ${verdict(ratio <= COST_RATIO_TARGET)}`);
    console.log(`sensitive requests answered by a cloud target, all configs: ${sensitiveOnCloud}: ${verdict(sensitiveOnCloud === 0)}`);
    if (!allAnswered) console.log('some requests failed (see above): FAIL');
    console.log(`economics: ${verdict(pass)}`);
    return { pass };
  } finally {
    await cleanup.runAll();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}
