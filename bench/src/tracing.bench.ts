import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManagedProcess, freePort } from '@switchyard/devkit';
import { startSim } from './crash-resume/processes';
import { runRoundProcess } from './pipeline/pipeline.bench';
import { pipelineSettingsFromEnv, type RoundResult } from './pipeline/settings';
import { OtlpSink } from './support/otlp-sink';
import { fixed, heading, median, percentile, table, verdict } from './support/report';
import { Cleanup, REDIS_URL, benchPrefix, createBenchDatabase, deleteKeys } from './support/resources';

/** Issue 9's bar: tracing on (exporting) costs at most 10 % of the gateway's added latency and of the pipeline ratio. */
export const TRACING_MAX_COST = 0.1;

const GATEWAY_ROUNDS = Number(process.env.BENCH_TRACING_GATEWAY_ROUNDS ?? 6);
const GATEWAY_PER_ROUND = Number(process.env.BENCH_TRACING_GATEWAY_REQUESTS ?? 400);
const GATEWAY_WARMUP = Number(process.env.BENCH_TRACING_GATEWAY_WARMUP ?? 500);

interface Endpoint {
  name: string;
  port: number;
  model: string;
  agent: Agent;
  samplesMs: number[];
}

function post(endpoint: Endpoint, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: endpoint.port,
        path: '/v1/chat/completions',
        method: 'POST',
        agent: endpoint.agent,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

let counter = 0;
async function timed(endpoint: Endpoint, n: number, keep: boolean): Promise<void> {
  for (let i = 0; i < n; i += 1) {
    counter += 1;
    const body = JSON.stringify({ model: endpoint.model, messages: [{ role: 'user', content: `ping ${counter}` }], max_tokens: 16 });
    const t0 = process.hrtime.bigint();
    const status = await post(endpoint, body);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (status !== 200) throw new Error(`${endpoint.name}: status ${status}`);
    if (keep) endpoint.samplesMs.push(ms);
  }
}

/** The gateway's added latency (p50 over llm-sim directly), with tracing off (spans not exported) and on (exported). */
async function gatewayCost(cleanup: Cleanup, sink: OtlpSink): Promise<{ off: number; on: number; cost: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-tracing-'));
  cleanup.add('temp dir', async () => rmSync(dir, { recursive: true, force: true }));
  const sim = await startSim(dir);
  cleanup.add('llm-sim', () => sim.process.stop());
  const startSupervisor = async (label: string, extra: Record<string, string>) => {
    const dbUrl = await createBenchDatabase(cleanup);
    const prefix = benchPrefix();
    cleanup.add(`queue keys ${prefix}`, async () => void (await deleteKeys(prefix)));
    const port = await freePort();
    const proc = ManagedProcess.start(
      'supervisor',
      { DATABASE_URL: dbUrl, REDIS_URL, QUEUE_PREFIX: prefix, ROUTER_CONFIG: sim.routerConfig, PORT: String(port), LOG_LEVEL: 'info', ...extra },
      `supervisor-${label}`,
    );
    cleanup.add(`supervisor-${label}`, () => proc.stop());
    await proc.waitForLine(/supervisor listening/, 60_000);
    return port;
  };
  const offPort = await startSupervisor('tracing-off', {});
  const onPort = await startSupervisor('tracing-on', sink.env);
  const keepAlive = () => new Agent({ keepAlive: true, maxSockets: 1 });
  const off: Endpoint = { name: 'ours, tracing off', port: offPort, model: 'auto', agent: keepAlive(), samplesMs: [] };
  const on: Endpoint = { name: 'ours, tracing on (exporting)', port: onPort, model: 'auto', agent: keepAlive(), samplesMs: [] };
  // The router sends `auto` to one target; direct calls go to that target with its model.
  const probe = await fetch(`http://127.0.0.1:${offPort}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'auto', messages: [{ role: 'user', content: 'which target?' }], max_tokens: 16 }),
  });
  const target = probe.headers.get('x-switchyard-target') ?? '';
  const model = ((await probe.json()) as { model: string }).model;
  const direct: Endpoint = { name: 'direct (llm-sim)', port: sim.ports[target]!, model, agent: keepAlive(), samplesMs: [] };
  const sides = [direct, off, on];
  for (const side of sides) await timed(side, GATEWAY_WARMUP, false);
  for (let round = 1; round <= GATEWAY_ROUNDS; round += 1) {
    // Alternate the order so that neither side always follows the other.
    for (const side of round % 2 === 0 ? [direct, on, off] : sides) await timed(side, GATEWAY_PER_ROUND, true);
  }
  for (const side of sides) side.agent.destroy();
  const d50 = percentile(direct.samplesMs, 50);
  const added = (e: Endpoint) => percentile(e.samplesMs, 50) - d50;
  console.log(
    table(
      ['side', 'requests', 'p50 µs', 'p99 µs', 'added p50 µs'],
      sides.map((s) => [s.name, String(s.samplesMs.length), fixed(percentile(s.samplesMs, 50) * 1000), fixed(percentile(s.samplesMs, 99) * 1000), s === direct ? '—' : fixed(added(s) * 1000)]),
    ),
  );
  return { off: added(off), on: added(on), cost: (added(on) - added(off)) / added(off) };
}

/** The pipeline ratio (switchyard / raw BullMQ tasks per second) with tracing off and on. */
async function pipelineCost(cleanup: Cleanup, sink: OtlpSink): Promise<{ off: number; on: number; cost: number }> {
  const s = pipelineSettingsFromEnv();
  const dbUrl = await createBenchDatabase(cleanup);
  const prefix = benchPrefix();
  cleanup.add(`redis keys ${prefix}*`, async () => void (await deleteKeys(prefix)));
  const results: { variant: 'raw' | 'off' | 'on'; result: RoundResult }[] = [];
  for (let round = 1; round <= s.rounds; round += 1) {
    for (const variant of round % 2 === 0 ? (['raw', 'on', 'off'] as const) : (['raw', 'off', 'on'] as const)) {
      const side = variant === 'raw' ? 'raw' : 'switchyard';
      const result = await runRoundProcess({ side, label: `${variant}-r${round}`, prefix, dbUrl, settings: s }, variant === 'on' ? { env: sink.env } : {});
      console.log(`  ${variant} r${round}: ${fixed(result.tasksPerSecond)} tasks/s`);
      results.push({ variant, result });
    }
  }
  const rate = (variant: 'raw' | 'off' | 'on') => median(results.filter((r) => r.variant === variant).map((r) => r.result.tasksPerSecond));
  const raw = rate('raw');
  const off = rate('off') / raw;
  const on = rate('on') / raw;
  console.log(
    table(
      ['median of rounds', 'tasks/s', 'ratio to raw'],
      [
        ['raw BullMQ flows', fixed(raw), '1'],
        ['switchyard, tracing off', fixed(rate('off')), fixed(off, 3)],
        ['switchyard, tracing on (exporting)', fixed(rate('on')), fixed(on, 3)],
      ],
    ),
  );
  return { off, on, cost: (off - on) / off };
}

export async function runTracingBench(): Promise<{ pass: boolean }> {
  heading('Bench 7: what tracing costs (off = spans created, not exported; on = exported over OTLP/HTTP protobuf to a local receiver)');
  const cleanup = new Cleanup();
  const onSignal = () => void cleanup.runAll().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const sink = await OtlpSink.start();
  cleanup.add('otlp receiver', () => sink.stop());
  try {
    console.log(`gateway: ${GATEWAY_ROUNDS} rounds × ${GATEWAY_PER_ROUND} sequential requests per side (after ${GATEWAY_WARMUP} untimed), keep-alive, llm-sim latency 0`);
    const gateway = await gatewayCost(cleanup, sink);
    console.log('pipeline: the pipeline bench\'s rounds (fresh process each), alternating raw / tracing off / tracing on');
    const pipeline = await pipelineCost(cleanup, sink);
    const gatewayPass = gateway.cost <= TRACING_MAX_COST;
    const pipelinePass = pipeline.cost <= TRACING_MAX_COST;
    console.log(`receiver got ${fixed(sink.requests)} exports, ${fixed(sink.bytes / 1024)} KiB`);
    console.log(
      `gateway added p50: off ${fixed(gateway.off * 1000)} µs, on ${fixed(gateway.on * 1000)} µs → tracing costs ${fixed(gateway.cost * 100, 1)} % (≤ ${TRACING_MAX_COST * 100} %): ${verdict(gatewayPass)}`,
    );
    console.log(
      `pipeline ratio: off ${fixed(pipeline.off, 3)}, on ${fixed(pipeline.on, 3)} → tracing costs ${fixed(pipeline.cost * 100, 1)} % (≤ ${TRACING_MAX_COST * 100} %): ${verdict(pipelinePass)}`,
    );
    return { pass: gatewayPass && pipelinePass };
  } finally {
    await cleanup.runAll();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}
