import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ManagedProcess, REPO_ROOT, SIM_TARGETS, freePort, simPorts, simTargetsEnv, writeRouterConfigForSim } from '@switchyard/devkit';
import { deleteKeysWithPrefix } from '@switchyard/platform';
import { REDIS_URL, connectRedis, type Cleanup } from '../support/resources';
import { perfMapNodeArgs, printPerfMapPid } from '../support/env';

/**
 * The real processes of the end-to-end bench, built from this checkout: llm-sim, the
 * supervisor, Switchyard workers, and the BullMQ-only flow workers of the baseline and the
 * floor (flow-worker.ts). Every process is registered with the bench's Cleanup as it starts.
 */

/** Every Postgres connection of the platform's processes carries this application_name prefix. */
export const APP_NAME_PREFIX = 'sy-e2e-';

export interface Sim {
  process: ManagedProcess;
  control: string;
  ports: Record<string, number>;
  routerConfig: string;
}

/**
 * llm-sim with every target answering after `latencyMs`, and the shipped router config pointed
 * at it. `maxConcurrency` replaces every target's max_concurrency (the scale bench measures the
 * platform, not the shipped per-target limits of 8–50 calls).
 */
export async function startSim(dir: string, cleanup: Cleanup, latencyMs: number, maxConcurrency?: number): Promise<Sim> {
  const { targets: ports, control: controlPort } = await simPorts();
  const sim = ManagedProcess.start('llm-sim', {
    LLM_SIM_TARGETS: simTargetsEnv(
      ports,
      SIM_TARGETS.map(() => latencyMs),
    ),
    LLM_SIM_CONTROL_PORT: String(controlPort),
  });
  cleanup.add('llm-sim', () => sim.stop());
  await sim.waitForLine(/llm-sim listening/, 30_000);
  const routerConfig = writeRouterConfigForSim(dir, ports, (yaml) =>
    maxConcurrency === undefined ? yaml : yaml.replace(/max_concurrency: \d+/g, `max_concurrency: ${maxConcurrency}`),
  );
  return {
    process: sim,
    control: `http://127.0.0.1:${controlPort}`,
    ports: Object.fromEntries(SIM_TARGETS.map((t, i) => [t.name, ports[i]!])),
    routerConfig,
  };
}

/**
 * Every key the processes wrote under QUEUE_PREFIX `prefix`, the router's hash-tagged features
 * (`{…:router-fleet}`, breakers, budgets) included, and the bench's own flows under `prefix:`.
 */
export async function deletePlatformKeys(prefix: string): Promise<void> {
  const redis = connectRedis('sy-bench-cleanup');
  try {
    await deleteKeysWithPrefix(redis, prefix);
  } finally {
    redis.disconnect();
  }
}

/** The sim's peak number of requests open at once per target since its start (or last reset). */
export async function simPeakConcurrency(sim: Sim): Promise<Record<string, number>> {
  const res = await fetch(`${sim.control}/targets`);
  const body = (await res.json()) as { targets: { name: string; peak_concurrency?: number }[] };
  return Object.fromEntries(body.targets.map((t) => [t.name, t.peak_concurrency ?? 0]));
}

/** The shipped tenants config with the dev tenant (no API_KEYS) allowed `runningJobs` at once. */
function writeTenantsConfig(dir: string, runningJobs: number): string {
  const file = join(dir, 'tenants.yaml');
  writeFileSync(
    file,
    `defaults: {max_running_jobs: 2, daily_budget_usd: null, gateway_rpm: null}
global: {max_running_jobs: ${runningJobs}}
tenants:
  dev: {max_running_jobs: ${runningJobs}}
`,
  );
  return file;
}

/** `url` with the connections named, so each process's Postgres backends can be told apart. */
function namedConnections(url: string, name: string): string {
  const named = new URL(url);
  named.searchParams.set('application_name', `${APP_NAME_PREFIX}${name}`);
  return named.toString();
}

export interface PlatformSettings {
  dbUrl: string;
  prefix: string;
  sim: Sim;
  dir: string;
  /** Jobs the dev tenant (and the fleet) may run at once. */
  runningJobs: number;
  /** Extra environment of every worker (WORKER_CONCURRENCY, DATABASE_POOL_SIZE, NODE_OPTIONS …). */
  workerEnv?: Record<string, string>;
}

export class Platform {
  readonly workers: ManagedProcess[] = [];
  private workerNodeArgs: readonly string[] = perfMapNodeArgs();

  private constructor(
    readonly supervisor: ManagedProcess,
    readonly baseUrl: string,
    private readonly env: Record<string, string>,
    private readonly settings: PlatformSettings,
    private readonly cleanup: Cleanup,
  ) {}

  /** The supervisor (HTTP on a free port), without workers. */
  static async start(settings: PlatformSettings, cleanup: Cleanup): Promise<Platform> {
    const env = {
      REDIS_URL,
      QUEUE_PREFIX: settings.prefix,
      ROUTER_CONFIG: settings.sim.routerConfig,
      TENANTS_CONFIG: writeTenantsConfig(settings.dir, settings.runningJobs),
      LOG_LEVEL: 'info',
    };
    const port = await freePort();
    const supervisor = ManagedProcess.start('supervisor', { ...env, DATABASE_URL: namedConnections(settings.dbUrl, 'supervisor'), PORT: String(port) });
    cleanup.add('supervisor', () => supervisor.stop());
    await supervisor.waitForLine(/supervisor listening/, 60_000);
    return new Platform(supervisor, `http://127.0.0.1:${port}`, env, settings, cleanup);
  }

  async startWorker(): Promise<ManagedProcess> {
    const name = `worker-${this.workers.length + 1}`;
    const worker = ManagedProcess.start('worker', { ...this.env, ...this.settings.workerEnv, DATABASE_URL: namedConnections(this.settings.dbUrl, name), WORKER_ID: `bench-${name}` }, name, this.workerNodeArgs);
    this.cleanup.add(name, () => worker.stop(30_000));
    this.workers.push(worker);
    await worker.waitForLine(/worker consuming/, 60_000);
    printPerfMapPid(name, worker.child.pid);
    return worker;
  }

  /** Stops the workers (graceful: a profiled worker writes its profile on exit). */
  async stopWorkers(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.stop(30_000)));
  }

  /** As many workers again, started with `nodeArgs` (e.g. `--cpu-prof`). */
  async restartWorkers(nodeArgs: readonly string[]): Promise<void> {
    const count = this.workers.length;
    await this.stopWorkers();
    this.workers.length = 0;
    this.workerNodeArgs = nodeArgs;
    for (let i = 0; i < count; i += 1) await this.startWorker();
  }
}

/** Log lines of `processes` from the given output offsets on, counted by their pino `msg` (warnings and worse marked). */
export function logMessagesSince(processes: readonly ManagedProcess[], offsets: ReadonlyMap<string, number>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const process of processes) {
    for (const line of process.output.slice(offsets.get(process.name) ?? 0)) {
      try {
        const entry = JSON.parse(line) as { msg?: string; level?: number | string; dropped?: { reason?: string }[] };
        const level = typeof entry.level === 'number' ? entry.level : 30;
        // A routing decision that dropped targets: why (overloaded, breaker open, …).
        const why = entry.dropped?.[0]?.reason === undefined ? '' : ` (${entry.dropped[0].reason})`;
        const key = `${level >= 40 ? 'WARN+ ' : ''}${entry.msg ?? '(no msg)'}${why}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      } catch {
        counts.set('(not JSON)', (counts.get('(not JSON)') ?? 0) + 1);
      }
    }
  }
  return counts;
}

export const outputOffsets = (processes: readonly ManagedProcess[]): Map<string, number> => new Map(processes.map((p) => [p.name, p.output.length]));

/** A BullMQ-only worker process (flow-worker.ts): `noop` (the raw baseline) or `sdk` (the floor). */
export async function startFlowWorker(cleanup: Cleanup, name: string, mode: 'noop' | 'sdk', prefix: string, concurrency: number, sim: Sim): Promise<ManagedProcess> {
  const target = (targetName: string) => {
    const spec = SIM_TARGETS.find((t) => t.name === targetName)!;
    return [`http://127.0.0.1:${sim.ports[targetName]}/v1`, spec.model];
  };
  // The targets the real agents are routed to: extract → the local 7B, synthesize → the cloud model.
  const args = [join(__dirname, 'flow-worker.js'), mode, prefix, String(concurrency), ...(mode === 'sdk' ? [...target('local_vllm_7b'), ...target('cloud_main')] : [])];
  const child = spawn(process.execPath, [...perfMapNodeArgs(), ...args], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', REDIS_URL, NODE_ENV: 'production' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const worker = new ManagedProcess(name, child);
  cleanup.add(name, () => worker.stop());
  await worker.waitForLine(/flow worker ready/, 60_000);
  printPerfMapPid(name, child.pid);
  return worker;
}
