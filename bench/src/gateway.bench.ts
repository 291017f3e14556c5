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
import { selfTimeTables, timeByPart, type ProfilePart } from './support/cpu-profile';
import { processCpuSeconds } from './support/cpu';
import { perfMapNodeArgs, printPerfMapPid } from './support/env';

/**
 * Gateway added latency: one small non-streaming chat completion, sequentially (concurrency 1)
 * over a keep-alive connection, to llm-sim directly, through our supervisor (dev mode and with
 * API_KEYS), through the Portkey gateway (`@portkey-ai/gateway`, installed into a temporary
 * folder outside the repository; not a project dependency), and through two reference proxies
 * that show the floor on this machine (bench/src/gateway/reference-proxy.ts): a bare node:http
 * pass-through, a bare node:http server that streams upstream and assembles the answer, and a bare node:http server calling our OpenAI provider (the openai SDK) as the
 * router does. Sides alternate in rounds. Added latency = side − direct, at p50 and p99.
 */

/** Issue target: ours adds at most half of what Portkey adds (p50); ~0.7 ms absolute guide. */
export const GATEWAY_ABSOLUTE_GUIDE_MS = 0.7;

export interface GatewaySummary {
  pass: boolean;
}

const ROUNDS = Number(process.env.BENCH_GATEWAY_ROUNDS ?? 4);
const PER_ROUND = Number(process.env.BENCH_GATEWAY_REQUESTS ?? 500);
const WARMUP = Number(process.env.BENCH_GATEWAY_WARMUP ?? 3_000);
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
    const reply = await postJson(side, body).catch((error: unknown) => {
      throw new Error(`${side.name}: request ${i + 1} of ${n}: ${String(error)}`);
    });
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
async function startReferenceProxy(
  cleanup: Cleanup,
  mode: 'transport' | 'stream' | 'sdk',
  simPort: number,
  model: string,
  nodeArgs: readonly string[] = [],
): Promise<{ port: number; pid: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [...nodeArgs, join(__dirname, 'gateway/reference-proxy.js'), mode, `http://127.0.0.1:${simPort}/v1`, model], {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await exited;
  };
  cleanup.add(`reference proxy (${mode})`, stop);
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-4000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`reference proxy (${mode}) did not start: ${stderr}`)), 20_000);
    child.stdout?.on('data', (c: Buffer) => {
      const port = /listening (\d+)/.exec(c.toString('utf8'))?.[1];
      if (port === undefined) return;
      clearTimeout(timer);
      resolve({ port: Number(port), pid: child.pid!, stop });
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
    const referenceProfileDir = profileDir && join(dir, 'profiles-reference');
    if (profileDir) mkdirSync(profileDir);
    if (referenceProfileDir) mkdirSync(referenceProfileDir);
    // BENCH_PERF_MAP=1: the same two processes can be profiled by perf.
    const profileArgs = (into: string | undefined) => [...perfMapNodeArgs(), ...(into ? ['--cpu-prof', `--cpu-prof-dir=${into}`, '--cpu-prof-interval=100'] : [])];
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
    } = await startSupervisor('dev', {}, profileArgs(profileDir));
    printPerfMapPid('dev-mode supervisor', devProc.child.pid);
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
    const transportProxy = await startReferenceProxy(cleanup, 'transport', simPort, model);
    const streamProxy = await startReferenceProxy(cleanup, 'stream', simPort, model, profileArgs(referenceProfileDir));
    printPerfMapPid('streamed-upstream reference', streamProxy.pid);
    const sdkProxy = await startReferenceProxy(cleanup, 'sdk', simPort, model);
    const transportFloor = plainSide('reference: node:http pass-through', transportProxy.port);
    const streamFloor = plainSide('reference: node:http, streamed upstream', streamProxy.port);
    const sdkFloor = plainSide('reference: node:http + openai SDK', sdkProxy.port);
    const sides: Side[] = [direct, transportFloor, streamFloor, sdkFloor, ours, oursAuth];
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
    // The CPU each gateway process spends on its own timed requests (/proc, utime + stime).
    const pids = new Map<Side, number>([
      [transportFloor, transportProxy.pid],
      [streamFloor, streamProxy.pid],
      [sdkFloor, sdkProxy.pid],
      [ours, devProc.child.pid!],
    ]);
    const cpuSeconds = new Map<Side, number>();
    for (let round = 1; round <= ROUNDS; round += 1) {
      const line: string[] = [];
      for (const side of sides) {
        const pid = pids.get(side);
        const cpuBefore = pid === undefined ? 0 : processCpuSeconds(pid);
        const samples = await timed(side, model, PER_ROUND, true);
        if (pid !== undefined) cpuSeconds.set(side, (cpuSeconds.get(side) ?? 0) + processCpuSeconds(pid) - cpuBefore);
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
      }; ours adds ${fixed((worstOurs - floorAdded) * 1000)} µs on top of that floor (auth, validation, routing, health, breaker, ledger, metrics, tracing)`,
    );
    console.log(
      `a bare server that streams upstream as the router does (stream: true, include_usage; SSE parsed and assembled) adds ${fixed(added(streamFloor) * 1000)} µs; ` +
        `ours adds ${fixed((worstOurs - added(streamFloor)) * 1000)} µs on top of it`,
    );
    console.log(`gateway added latency: ${verdict(pass)} (shared, noisy 2-core machine: read the µs as rough)`);
    const cpuPerRequest = (side: Side) => ((cpuSeconds.get(side) ?? 0) * 1e6) / (ROUNDS * PER_ROUND);
    const cpuPerRequestUs = cpuPerRequest(ours);
    console.log(
      `CPU per timed request (/proc utime + stime of the process over its own timed rounds): ours (dev mode) ${fixed(cpuPerRequestUs)} µs, ` +
        `pass-through reference ${fixed(cpuPerRequest(transportFloor))} µs, streamed-upstream reference ${fixed(cpuPerRequest(streamFloor))} µs, openai SDK reference ${fixed(cpuPerRequest(sdkFloor))} µs`,
    );
    if (profileDir && referenceProfileDir) {
      await devProc.stop();
      await streamProxy.stop();
      printProfile(profileDir, cpuPerRequestUs, referenceProfileDir, cpuPerRequest(streamFloor));
    }
    return { pass };
  } finally {
    await cleanup.runAll();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

/**
 * Where a gateway's CPU goes, by part of the work. A sample belongs to the part of the innermost
 * frame of its stack that matches one (else "other": node core, microtasks). The same parts
 * split the supervisor and the streamed-upstream reference, so what ours spends above that
 * floor shows per part.
 */
const GATEWAY_PARTS: readonly ProfilePart[] = [
  { name: 'GC and VM', frame: /^\((garbage collector|program)\)/ },
  // The chat route serves below fastify (chat-completions.route): its own frames are its answer's writing and headers.
  { name: 'answer to the client (reply, serialize, socket write)', frame: /^(writePayload|onSendEnd|safeWriteHead|onSendHook|serialize|Reply\.send) fastify |chat-completions\.route|routes-below-fastify/ },
  { name: 'upstream call (undici, our request and SSE read, assembly)', frame: / undici |upstream-fetch|pass-through|sse-event-reader|choice-assembler|^streamedUpstream / },
  { name: 'request body read + JSON parse', frame: /ContentTypeParser|^rawBody fastify|json-body|request-body|^readBody / },
  { name: 'request validation (zod, SafeString, meta)', frame: /chat-completion\.schema| zod |safe-string/ },
  { name: 'observers after the attempt (metrics, ledger, decision log)', frame: /^notify @switchyard|ledger|decision-log|upstream-metrics/ },
  { name: 'routing decision (rules, health, tokens)', frame: /decide|route-selector|estimate-tokens|gpt-tokenizer|sliding-window|health|live-target/ },
  { name: 'deadline timers, abort signals', frame: /staged-deadline|abort_controller|event_target|node core timers|node:timers/ },
  { name: 'tracing (OpenTelemetry)', frame: /opentelemetry|telemetry\.js|http-tracing/ },
  { name: 'metrics (prom-client)', frame: /prom-client|http-metrics|metrics-registry/ },
  { name: 'Postgres (pg, drizzle)', frame: / pg | drizzle-orm / },
  { name: 'Nest (router, guards, params)', frame: /@nestjs/ },
  { name: 'fastify (routing, hooks, request)', frame: / fastify | find-my-way |@fastify/ },
  { name: 'logging (pino)', frame: / pino/ },
  { name: 'router / gateway, other', frame: /@switchyard\// },
];

/**
 * BENCH_PROFILE=1: the dev-mode supervisor's and the streamed-upstream reference's --cpu-prof,
 * from after start-up (the first idle stretch of 1 s) to exit, warm-up included; split by part
 * (both), and self time by package and by function (ours), as shares of the busy time and as
 * µs per request of the CPU measured per timed request.
 */
function printProfile(profileDir: string, cpuPerRequestUs: number, referenceDir: string, referenceCpuUs: number): void {
  heading('Bench 4 profile (BENCH_PROFILE=1): the dev-mode supervisor and the streamed-upstream reference under --cpu-prof');
  const profiles = (folder: string) =>
    readdirSync(folder)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(folder, f));
  const files = profiles(profileDir);
  const referenceFiles = profiles(referenceDir);
  if (files.length === 0) throw new Error('the profiled supervisor wrote no .cpuprofile');
  if (process.env.BENCH_PROFILE_KEEP) for (const f of files) writeFileSync(process.env.BENCH_PROFILE_KEEP, readFileSync(f));
  const options = { afterIdleGapMs: 1_000 };
  const perRequest = (share: number) => fixed(share * cpuPerRequestUs);
  const ourParts = timeByPart(files, GATEWAY_PARTS, options, 'other (node core, microtasks)');
  const referenceParts = new Map(referenceFiles.length === 0 ? [] : timeByPart(referenceFiles, GATEWAY_PARTS, options, 'other (node core, microtasks)').map((t) => [t.key, t.share]));
  console.log(
    `CPU per timed request: ours ${fixed(cpuPerRequestUs)} µs, the streamed-upstream reference ${fixed(referenceCpuUs)} µs; split by the profiles' shares of busy time:\n` +
      table(
        ['part', 'ours µs per request', 'reference µs per request', 'ours − reference µs'],
        ourParts.map((t) => {
          const reference = (referenceParts.get(t.key) ?? 0) * referenceCpuUs;
          return [t.key, perRequest(t.share), fixed(reference), fixed(t.share * cpuPerRequestUs - reference)];
        }),
      ) +
      '\n\n' +
      selfTimeTables(files, options, 'request', perRequest, { packages: 20, functions: 40 }),
  );
}
