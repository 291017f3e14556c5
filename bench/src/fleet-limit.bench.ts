import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ManagedProcess, SIM_TARGETS, simPorts, simTargetsEnv } from '@switchyard/devkit';
import { fixed, heading, percentile, table, verdict } from './support/report';
import { Cleanup, REDIS_URL, benchPrefix, deleteKeys } from './support/resources';

/**
 * Bench 6 (issue 10): four processes, each with `LOOPS` callers, hammer one local target whose
 * max_concurrency is 8, through the Redis fleet limiter. The sim counts how many requests it
 * holds open at once (must stay ≤ 8); each process times its limiter calls (the latency the
 * limiter adds to a call: one Lua round trip per acquire).
 */
const PROCESSES = 4;
const LOOPS = 8;
const MAX_CONCURRENCY = 8;
const DURATION_MS = Number(process.env.BENCH_FLEET_DURATION_MS ?? 10_000);
const SIM_LATENCY_MS = 50;

interface HammerReport {
  processId: string;
  calls: number;
  failures: number;
  refusals: number;
  acquireMs: number[];
}

function runHammer(args: Record<string, unknown>): Promise<HammerReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(__dirname, 'fleet-limit/hammer.js'), JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`hammer ${String(args.processId)} exited ${code}`));
      else resolve(JSON.parse(out.trim().split('\n').pop()!) as HammerReport);
    });
  });
}

export async function runFleetLimitBench(): Promise<{ pass: boolean }> {
  heading(`Bench 6: fleet-wide max_concurrency (${PROCESSES} processes × ${LOOPS} callers, one target with max_concurrency ${MAX_CONCURRENCY}, ${DURATION_MS / 1000} s)`);
  const cleanup = new Cleanup();
  const prefix = benchPrefix();
  try {
    const { targets: ports, control: controlPort } = await simPorts();
    const sim = ManagedProcess.start('llm-sim', { LLM_SIM_TARGETS: simTargetsEnv(ports, [SIM_LATENCY_MS]), LLM_SIM_CONTROL_PORT: String(controlPort) });
    cleanup.add('llm-sim', () => sim.stop());
    await sim.waitForLine(/llm-sim listening/, 30_000);
    cleanup.add('redis keys', () => deleteKeys(prefix));
    const target = SIM_TARGETS[0];
    const reports = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) =>
        runHammer({
          endpoint: `http://127.0.0.1:${ports[0]}/v1`,
          model: target.model,
          maxConcurrency: MAX_CONCURRENCY,
          loops: LOOPS,
          durationMs: DURATION_MS,
          prefix,
          processId: `bench-p${i + 1}`,
          redisUrl: REDIS_URL,
        }),
      ),
    );
    const res = await fetch(`http://127.0.0.1:${controlPort}/targets`);
    const simTarget = ((await res.json()) as { targets: { name: string; peak_concurrency: number }[] }).targets.find((t) => t.name === target.name)!;
    const acquire = reports.flatMap((r) => r.acquireMs);
    const calls = reports.reduce((n, r) => n + r.calls, 0);
    console.log(
      table(
        ['process', 'calls', 'failed', 'refused acquires', 'acquire p50 ms', 'acquire p99 ms'],
        reports.map((r) => [r.processId, String(r.calls), String(r.failures), String(r.refusals), fixed(percentile(r.acquireMs, 50), 2), fixed(percentile(r.acquireMs, 99), 2)]),
        ['left', 'right', 'right', 'right', 'right', 'right'],
      ),
    );
    const pass = simTarget.peak_concurrency <= MAX_CONCURRENCY && calls > 0;
    console.log(
      `calls ${calls} (${fixed(calls / (DURATION_MS / 1000))}/s); sim's peak concurrency on ${target.name}: ${simTarget.peak_concurrency} (limit ${MAX_CONCURRENCY}); ` +
        `limiter added latency per acquire: p50 ${fixed(percentile(acquire, 50), 2)} ms, p99 ${fixed(percentile(acquire, 99), 2)} ms over ${acquire.length} acquires — ${verdict(pass)}`,
    );
    return { pass };
  } finally {
    await cleanup.runAll();
  }
}
