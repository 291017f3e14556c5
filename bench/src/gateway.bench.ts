import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { ManagedProcess, freePort, sleep } from '@switchyard/devkit';
import { startSim } from './crash-resume/processes';
import { Cleanup, REDIS_URL, benchPrefix, createBenchDatabase, deleteKeys } from './support/resources';
import { postJson } from './support/http';
import { fixed, heading, median, percentile, table, verdict } from './support/report';
import { selfTimeByFunction, selfTimeByPackage } from './support/cpu-profile';
import { processCpuSeconds } from './support/cpu';

/**
 * Gateway added latency: one small non-streaming chat completion, sequentially (concurrency 1)
 * over a keep-alive connection, to llm-sim directly, through our supervisor (dev mode and with
 * API_KEYS), through the Portkey gateway (`@portkey-ai/gateway`, installed into a temporary
 * folder outside the repository; not a project dependency), and through two reference proxies
 * that show the floor on this machine (bench/src/gateway/reference-proxy.ts): a bare node:http
 * pass-through, and a bare node:http server calling our OpenAI provider (the openai SDK) as the
 * router does. Sides alternate in rounds. Added latency = side − direct, at p50 and p99.
 */

/** Issue target: ours adds at most half of what Portkey adds (p50); ~0.7 ms absolute guide. */
export const GATEWAY_ABSOLUTE_GUIDE_MS = 0.7;

export interface GatewaySummary {
  pass: boolean;
}

const ROUNDS = Number(process.env.BENCH_GATEWAY_ROUNDS ?? 4);
const PER_ROUND = Number(process.env.BENCH_GATEWAY_REQUESTS ?? 500);
const WARMUP = Number(process.env.BENCH_GATEWAY_WARMUP ?? 500);
const PORTKEY_VERSION = process.env.BENCH_PORTKEY_VERSION ?? '1.15.2';
const API_KEY = 'key-bench-gateway-0001';

interface Side {
  name: string;
  port: number;
  path: string;
  headers: Record<string, string>;
  agent: Agent;
  /** The model this side is asked for; the routed target's model unless set (our gateway: `auto`). */
  model?: string;
  samplesMs: number[];
  roundP50s: number[];
  /** Checks one response (status, headers); returns an error text or undefined. */
  check: (status: number, headers: Record<string, string | string[] | undefined>, body: string) => string | undefined;
}


let counter = 0;
/**
 * A small request; the text varies so that no cache can answer (and temperature is not 0). Its
 * meta is given, so our gateway's inferred-meta classifier does not route "ping 7" and "ping 8"
 * to different targets; every side gets the same body (the others pass `metadata` on or ignore it).
 */
function requestBody(model: string): string {
  counter += 1;
  return JSON.stringify({ model, messages: [{ role: 'user', content: `ping ${counter}` }], max_tokens: 16, metadata: { task_type: 'chat', complexity: 'low' } });
}

async function timed(side: Side, model: string, n: number, keep: boolean): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i += 1) {
    const body = requestBody(side.model ?? model);
    const t0 = process.hrtime.bigint();
    const reply = await postJson(side, body);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const problem = reply.status !== 200 ? `status ${reply.status}: ${reply.body.slice(0, 300)}` : side.check(reply.status, reply.headers, reply.body);
    if (problem) throw new Error(`${side.name}: ${problem}`);
    if (keep) out.push(ms);
  }
  return out;
}

function run(cmd: string, args: string[], cwd: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, timeout: timeoutMs, maxBuffer: 8 << 20 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${cmd} ${args.join(' ')}: ${error.message}\n${stderr.slice(-2000)}`)) : resolve(stdout),
    );
  });
}

/**
 * Installs Portkey into `dir` (outside the repo) and starts it on 127.0.0.1:<port>. Its CLI
 * listens on every interface; a preload pins the listen host to loopback.
 */
async function startPortkey(dir: string, cleanup: Cleanup, simPort: number, model: string): Promise<{ port: number; version: string }> {
  const preset = process.env.BENCH_PORTKEY_DIR;
  const prefix = preset ?? dir;
  const entry = join(prefix, 'node_modules/@portkey-ai/gateway/build/start-server.js');
  if (!existsSync(entry)) {
    mkdirSync(prefix, { recursive: true });
    console.log(`installing @portkey-ai/gateway@${PORTKEY_VERSION} into ${prefix} (temporary, not a project dependency) ...`);
    await run('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', `@portkey-ai/gateway@${PORTKEY_VERSION}`], prefix, 240_000);
  }
  const version = (JSON.parse(readFileSync(join(prefix, 'node_modules/@portkey-ai/gateway/package.json'), 'utf8')) as { version: string }).version;
  const preload = join(dir, 'loopback-only.cjs');
  writeFileSync(
    preload,
    `const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && args[1] === undefined && args.length > 1) args[1] = '127.0.0.1';
  else if (typeof args[0] === 'number' && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  else if (args[0] && typeof args[0] === 'object' && !args[0].host && !args[0].path) args[0] = { ...args[0], host: '127.0.0.1' };
  return listen.apply(this, args);
};
`,
  );
  const port = await freePort();
  const child = spawn(process.execPath, ['-r', preload, entry, `--port=${port}`, '--headless'], {
    cwd: prefix,
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-4000)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  cleanup.add('portkey', async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  });
  const probe: Side = portkeySide(port, simPort);
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await timed(probe, model, 1, false);
      break;
    } catch (error) {
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`portkey did not answer: ${error instanceof Error ? error.message : String(error)}\n${stderr}`, { cause: error });
      }
      await sleep(200);
    }
  }
  probe.agent.destroy();
  return { port, version };
}

/** A reference proxy (see reference-proxy.ts) in its own process, on a free port. */
async function startReferenceProxy(cleanup: Cleanup, mode: 'transport' | 'sdk', simPort: number, model: string): Promise<number> {
  const child = spawn(process.execPath, [join(__dirname, 'gateway/reference-proxy.js'), mode, `http://127.0.0.1:${simPort}/v1`, model], {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  cleanup.add(`reference proxy (${mode})`, async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await exited;
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-4000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`reference proxy (${mode}) did not start: ${stderr}`)), 20_000);
    child.stdout?.on('data', (c: Buffer) => {
      const port = /listening (\d+)/.exec(c.toString('utf8'))?.[1];
      if (port === undefined) return;
      clearTimeout(timer);
      resolve(Number(port));
    });
    void exited.then(() => reject(new Error(`reference proxy (${mode}) exited: ${stderr}`)));
  });
}

function plainSide(name: string, port: number): Side {
  return {
    name,
    port,
    path: '/v1/chat/completions',
    headers: {},
    agent: keepAlive(),
    samplesMs: [],
    roundP50s: [],
    check: (_s, _h, body) => (body.includes('chat.completion') ? undefined : `unexpected body ${body.slice(0, 200)}`),
  };
}

function keepAlive(): Agent {
  return new Agent({ keepAlive: true, maxSockets: 1 });
}

function portkeySide(port: number, simPort: number): Side {
  return {
    name: 'portkey',
    port,
    path: '/v1/chat/completions',
    headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `http://127.0.0.1:${simPort}/v1`, authorization: 'Bearer sk-bench' },
    agent: keepAlive(),
    samplesMs: [],
    roundP50s: [],
    check: (_s, _h, body) => (body.includes('chat.completion') ? undefined : `unexpected body ${body.slice(0, 200)}`),
  };
}

export async function runGatewayBench(): Promise<GatewaySummary> {
  heading('Bench 4: gateway added latency (direct sim vs ours vs Portkey)');
  console.log(
    `${ROUNDS} rounds × ${PER_ROUND} timed requests per side (after ${WARMUP} untimed per side); sequential, keep-alive node:http client; small non-streaming chat completion; llm-sim latency 0`,
  );
  const cleanup = new Cleanup();
  const onSignal = () => void cleanup.runAll().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-gateway-'));
  cleanup.add('temp dir', async () => rmSync(dir, { recursive: true, force: true }));
  try {
    const sim = await startSim(dir);
    cleanup.add('llm-sim', () => sim.process.stop());

    // Two supervisors: dev mode (no API_KEYS) and auth on. Each has its own database and prefix.
    // BENCH_PROFILE=1: the dev-mode supervisor runs under --cpu-prof (it is slower for it: read its
    // latency in such a run as a profile's, not a figure); the summary is printed after the run.
    const profileDir = process.env.BENCH_PROFILE ? join(dir, 'profiles') : undefined;
    if (profileDir) mkdirSync(profileDir);
    const startSupervisor = async (label: string, extra: Record<string, string>, nodeArgs: string[] = []) => {
      const dbUrl = await createBenchDatabase(cleanup);
      const prefix = benchPrefix();
      cleanup.add(`queue keys ${prefix}`, async () => void (await deleteKeys(`${prefix}`)));
      const port = await freePort();
      const proc = ManagedProcess.start(
        'supervisor',
        { DATABASE_URL: dbUrl, REDIS_URL, QUEUE_PREFIX: prefix, ROUTER_CONFIG: sim.routerConfig, PORT: String(port), LOG_LEVEL: 'info', ...extra },
        `supervisor-${label}`,
        nodeArgs,
      );
      cleanup.add(`supervisor-${label}`, () => proc.stop());
      await proc.waitForLine(/supervisor listening/, 60_000);
      return { port, dbUrl, proc };
    };
    const {
      port: devPort,
      dbUrl: devDb,
      proc: devProc,
    } = await startSupervisor('dev', {}, profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--cpu-prof-interval=100'] : []);
    const { port: authPort, dbUrl: authDb } = await startSupervisor('auth', { API_KEYS: `bench:${API_KEY}` });

    const targetCheck = (expected: { target?: string }) => (_s: number, h: Record<string, string | string[] | undefined>) => {
      const target = h['x-switchyard-target'];
      const source = h['x-switchyard-source'];
      if (source !== 'upstream') return `x-switchyard-source ${String(source)} (expected upstream)`;
      if (typeof target !== 'string') return 'no x-switchyard-target';
      if (expected.target !== undefined && target !== expected.target) return `routed to ${target}, expected ${expected.target}`;
      expected.target ??= target;
      return undefined;
    };
    const routed: { target?: string } = {};
    const ours: Side = { name: 'ours (dev mode)', port: devPort, path: '/v1/chat/completions', headers: {}, agent: keepAlive(), model: 'auto', samplesMs: [], roundP50s: [], check: targetCheck(routed) };
    const oursAuth: Side = {
      name: 'ours (API_KEYS on)',
      port: authPort,
      path: '/v1/chat/completions',
      headers: { authorization: `Bearer ${API_KEY}` },
      agent: keepAlive(),
      model: 'auto',
      samplesMs: [],
      roundP50s: [],
      check: targetCheck(routed),
    };
    // The first call decides which sim target the router picks; direct and Portkey use the same one.
    // The sim accepts only its own model ids: every other side sends the routed target's model (ours: `auto`).
    const first = await postJson(ours, requestBody('auto'));
    if (first.status !== 200) throw new Error(`ours: status ${first.status}: ${first.body.slice(0, 300)}`);
    const problem = ours.check(first.status, first.headers, first.body);
    if (problem) throw new Error(`ours: ${problem}`);
    const model = (JSON.parse(first.body) as { model: string }).model;
    const target = routed.target!;
    const simPort = sim.ports[target];
    if (simPort === undefined) throw new Error(`routed to ${target}, which is not a sim target`);
    console.log(`our router sends this request to ${target} (sim port ${simPort}, model ${model}); every side calls that target with that model`);
    // Auth really is on: no key → 401.
    const unauth = await postJson({ ...oursAuth, headers: {}, agent: keepAlive() }, requestBody('auto'));
    if (unauth.status !== 401) throw new Error(`supervisor with API_KEYS answered ${unauth.status} without a key (expected 401)`);

    const direct = plainSide('direct (llm-sim)', simPort);
    const transportFloor = plainSide('reference: node:http pass-through', await startReferenceProxy(cleanup, 'transport', simPort, model));
    const sdkFloor = plainSide('reference: node:http + openai SDK', await startReferenceProxy(cleanup, 'sdk', simPort, model));
    const sides: Side[] = [direct, transportFloor, sdkFloor, ours, oursAuth];
    let portkey: Side | undefined;
    let portkeyNote = '';
    const pkStarted = Date.now();
    try {
      const pk = await startPortkey(dir, cleanup, simPort, model);
      portkey = portkeySide(pk.port, simPort);
      sides.push(portkey);
      portkeyNote = `Portkey @portkey-ai/gateway ${pk.version} (installed into ${dir}, started in ${((Date.now() - pkStarted) / 1000).toFixed(1)} s, custom host → sim)`;
    } catch (error) {
      portkeyNote = `PORTKEY NOT MEASURED: ${error instanceof Error ? error.message : String(error)}`;
    }
    console.log(portkeyNote);

    for (const side of sides) await timed(side, model, WARMUP, false);
    let devCpuSeconds = 0;
    for (let round = 1; round <= ROUNDS; round += 1) {
      const line: string[] = [];
      for (const side of sides) {
        const cpuBefore = side === ours ? processCpuSeconds(devProc.child.pid!) : 0;
        const samples = await timed(side, model, PER_ROUND, true);
        if (side === ours) devCpuSeconds += processCpuSeconds(devProc.child.pid!) - cpuBefore;
        side.samplesMs.push(...samples);
        side.roundP50s.push(median(samples));
        line.push(`${side.name} ${fixed(median(samples) * 1000)} µs`);
      }
      console.log(`  round ${round} p50: ${line.join(' | ')}`);
    }
    for (const side of sides) side.agent.destroy();
    // The ledger is written off the hot path: give it a moment, then show that it was on.
    await sleep(2_000);
    const ledgerRows = async (dbUrl: string) => {
      const pool = new Pool({ connectionString: dbUrl, max: 1 });
      try {
        return Number((await pool.query<{ n: string }>('/* bench */ select count(*) as n from model_call_ledger')).rows[0]?.n ?? 0);
      } finally {
        await pool.end();
      }
    };
    console.log(`ledger rows (model_call_ledger): dev mode ${fixed(await ledgerRows(devDb))}, API_KEYS on ${fixed(await ledgerRows(authDb))}`);

    const d50 = percentile(direct.samplesMs, 50);
    const d99 = percentile(direct.samplesMs, 99);
    const rows = sides.map((s) => {
      const p50 = percentile(s.samplesMs, 50);
      const p99 = percentile(s.samplesMs, 99);
      return [
        s.name,
        String(s.samplesMs.length),
        fixed(p50 * 1000),
        fixed(p99 * 1000),
        s === direct ? '—' : fixed((p50 - d50) * 1000),
        s === direct ? '—' : fixed((p99 - d99) * 1000),
        s.roundP50s.map((v) => fixed(v * 1000)).join(' / '),
      ];
    });
    console.log('');
    console.log(table(['side', 'requests', 'p50 µs', 'p99 µs', 'added p50 µs', 'added p99 µs', 'p50 per round µs'], rows));

    const added = (s: Side) => percentile(s.samplesMs, 50) - d50;
    const worstOurs = Math.max(added(ours), added(oursAuth));
    const absolutePass = added(oursAuth) <= GATEWAY_ABSOLUTE_GUIDE_MS;
    console.log('');
    console.log(
      `ours (API_KEYS on) added p50 ${fixed(added(oursAuth) * 1000)} µs vs absolute guide ≤ ${GATEWAY_ABSOLUTE_GUIDE_MS * 1000} µs: ${verdict(absolutePass)}`,
    );
    let pass: boolean;
    if (portkey) {
      const pkAdded = added(portkey);
      pass = worstOurs <= pkAdded / 2;
      console.log(
        `ours added p50 (worse of dev / auth) ${fixed(worstOurs * 1000)} µs vs half of Portkey's ${fixed(pkAdded * 1000)} µs = ${fixed((pkAdded / 2) * 1000)} µs (ratio ours/Portkey ${(worstOurs / pkAdded).toFixed(2)}): ${verdict(pass)}`,
      );
    } else {
      pass = absolutePass;
      console.log(`Portkey was not measured: the verdict falls back to the absolute guide only (${verdict(pass)})`);
    }
    // What no gateway built on the openai SDK can avoid here, measured in the same run.
    const floorAdded = added(sdkFloor);
    console.log(
      `floor on this machine: a bare pass-through proxy adds ${fixed(added(transportFloor) * 1000)} µs; a bare server calling the openai SDK as our router does adds ${fixed(floorAdded * 1000)} µs${
        portkey ? ` (${(floorAdded / added(portkey)).toFixed(2)} × Portkey's)` : ''
      }; ours adds ${fixed((worstOurs - floorAdded) * 1000)} µs on top of that floor (routing, auth, health, breaker, ledger, Nest)`,
    );
    console.log(`gateway added latency: ${verdict(pass)} (shared, noisy 2-core machine: read the µs as rough)`);
    const cpuPerRequestUs = (devCpuSeconds * 1e6) / (ROUNDS * PER_ROUND);
    console.log(`ours (dev mode): supervisor CPU ${fixed(cpuPerRequestUs)} µs per timed request (/proc utime + stime over its timed rounds)`);
    if (profileDir) {
      await devProc.stop();
      printProfile(profileDir, cpuPerRequestUs);
    }
    return { pass };
  } finally {
    await cleanup.runAll();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

/**
 * BENCH_PROFILE=1: the dev-mode supervisor's --cpu-prof, from after its start-up (the first idle
 * stretch of 1 s: the second supervisor starting) to its exit, warm-up included; self time by
 * package and by function, as shares of the busy time and as µs per request of the CPU measured.
 */
function printProfile(profileDir: string, cpuPerRequestUs: number): void {
  heading('Bench 4 profile (BENCH_PROFILE=1): the dev-mode supervisor under --cpu-prof');
  const files = readdirSync(profileDir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(profileDir, f));
  if (files.length === 0) throw new Error('the profiled supervisor wrote no .cpuprofile');
  if (process.env.BENCH_PROFILE_KEEP) for (const f of files) writeFileSync(process.env.BENCH_PROFILE_KEEP, readFileSync(f));
  const options = { afterIdleGapMs: 1_000 };
  const perRequest = (share: number) => fixed(share * cpuPerRequestUs);
  console.log(
    `self time after start-up, as shares of the busy time; µs per request = share × the CPU measured per timed request (${fixed(cpuPerRequestUs)} µs)\n` +
      table(
        ['package / part', 'µs per request', 'share'],
        selfTimeByPackage(files, options)
          .slice(0, 20)
          .map((t) => [t.key, perRequest(t.share), `${fixed(t.share * 100, 1)} %`]),
      ) +
      '\n\n' +
      table(
        ['function (package, file:line)', 'µs per request', 'share'],
        selfTimeByFunction(files, options)
          .slice(0, 40)
          .map((t) => [t.key, perRequest(t.share), `${fixed(t.share * 100, 1)} %`]),
      ),
  );
}
