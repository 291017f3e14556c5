import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@switchyard/config';
import { connectRedis, deleteKeysWithPrefix } from '@switchyard/platform';
import { createTestDatabase, type TestDatabase } from '@switchyard/state/testing/test-database';
import { SIM_TARGETS, simTargetsEnv, writeRouterConfigForSim } from '@switchyard/devkit';
import { ManagedProcess, freePort, simPorts, waitFor } from './processes';
import { PrivatePgBouncer, PrivateRedisCluster } from './ha-services';

export { SIM_TARGETS };


export interface SimCall {
  seq: number;
  target: string;
  outcome: string;
  status: number | string;
  headers: Record<string, string>;
  traceparent?: string;
  last_user_message_preview: string;
  message_roles?: string[];
  first_user_message_preview?: string;
  client_gone: boolean;
}

export interface HttpResult<T = unknown> {
  status: number;
  headers: Headers;
  json: T;
}

export interface StackOptions {
  /** API_KEYS for the supervisor; dev mode when absent. */
  apiKeys?: string;
  workers?: number;
  env?: Record<string, string>;
  /** Redis of this stack (default the shared one on 6379), e.g. a private one a test restarts. */
  redisUrl?: string;
  /** Postgres server the stack's fresh database is created on (default the shared one). */
  databaseBaseUrl?: string;
  /**
   * A transaction pooler in front of the stack's database: the processes reach it through the
   * pooler (DATABASE_POOL_MODE=transaction) and migrate through the direct URL; the test's own
   * `db` handle stays direct.
   */
  pooler?: { pooled(directUrl: string): string };
  /** Edits the router config YAML (already pointed at this stack's sim). */
  editRouterConfig?: (yaml: string) => string;
}

/**
 * Where stacks started from now on (in this test file) keep their state: `direct` (the
 * shared Postgres and Redis), `pgbouncer` (Postgres through a PgBouncer of the stack's own,
 * transaction mode) or `cluster` (a three-master Redis Cluster of the stack's own). Drills
 * set it and then load existing e2e specs, which run unchanged on that topology.
 */
export type StackTopology = 'direct' | 'pgbouncer' | 'cluster';
const TOPOLOGIES: readonly StackTopology[] = ['direct', 'pgbouncer', 'cluster'];
/** `SWITCHYARD_E2E_TOPOLOGY=cluster npx jest --selectProjects e2e` runs the whole e2e suite on that topology. */
function topologyFromEnv(value = process.env.SWITCHYARD_E2E_TOPOLOGY): StackTopology {
  if (value === undefined || value === '') return 'direct';
  if (!(TOPOLOGIES as readonly string[]).includes(value)) throw new Error(`SWITCHYARD_E2E_TOPOLOGY must be one of ${TOPOLOGIES.join(', ')}`);
  return value as StackTopology;
}
let topologyForNewStacks: StackTopology = topologyFromEnv();
export function useTopologyForNewStacks(topology: StackTopology): void {
  topologyForNewStacks = topology;
}

/** Private servers a stack started for its topology, stopped with it. */
interface OwnedServices {
  pooler?: PrivatePgBouncer;
  cluster?: PrivateRedisCluster;
}

async function startTopology(options: StackOptions): Promise<{ owned: OwnedServices; options: StackOptions }> {
  const ownsRedis = options.redisUrl === undefined && !options.env?.REDIS_SENTINELS && !options.env?.REDIS_CLUSTER_NODES;
  if (topologyForNewStacks === 'pgbouncer' && options.pooler === undefined) {
    const pooler = await PrivatePgBouncer.start();
    return { owned: { pooler }, options: { ...options, pooler } };
  }
  if (topologyForNewStacks === 'cluster' && ownsRedis) {
    const cluster = await PrivateRedisCluster.start();
    return { owned: { cluster }, options: { ...options, env: { ...cluster.env, ...options.env } } };
  }
  return { owned: {}, options };
}

async function stopOwned(owned: OwnedServices): Promise<void> {
  await Promise.all([owned.pooler?.stop(), owned.cluster?.stop()]);
}

/**
 * Starts a supervisor on a free port and waits until it listens. A port found free can be taken
 * by another suite's process before the supervisor binds it (seen in CI): then it tries a new port,
 * unless `env.PORT` names the port.
 * Every supervisor started stays in `started` for the caller's cleanup, but one that could not
 * bind its port: that one is stopped and taken out.
 */
async function startSupervisorOnFreePort(env: Record<string, string>, name: string, started: ManagedProcess[]): Promise<{ supervisor: ManagedProcess; port: number }> {
  // A PORT the caller chose is kept: the caller already knows where to reach it.
  const chosenPort = env.PORT ? Number(env.PORT) : undefined;
  for (let attempt = 1; ; attempt += 1) {
    const port = chosenPort ?? (await freePort());
    const supervisor = ManagedProcess.start('supervisor', { ...env, PORT: String(port) }, name);
    started.push(supervisor);
    try {
      await supervisor.waitForLine(/supervisor listening/);
      return { supervisor, port };
    } catch (error) {
      if (chosenPort !== undefined || attempt >= 3 || !String(error).includes('EADDRINUSE')) throw error;
      await supervisor.stop();
      started.splice(started.indexOf(supervisor), 1);
    }
  }
}

/**
 * The real processes — llm-sim, supervisor, workers — built from this checkout, on free
 * ports, against a fresh database and a Redis key prefix of their own. The router config
 * is the shipped config/router.yaml with its endpoints moved to this sim's ports.
 */
export class TestStack {
  readonly workers: ManagedProcess[] = [];
  /** Supervisors started after the first one (several sweepers at once). */
  readonly extraSupervisors: ManagedProcess[] = [];
  /** Base URLs of `extraSupervisors`, in the same order. */
  readonly extraSupervisorUrls: string[] = [];
  private constructor(
    readonly db: TestDatabase,
    readonly prefix: string,
    readonly sim: ManagedProcess,
    readonly simControl: string,
    readonly supervisor: ManagedProcess,
    readonly baseUrl: string,
    readonly sharedEnv: Record<string, string>,
    private readonly tempDir: string,
    /** The private servers of this stack's topology (a pooler, a cluster), if any. */
    readonly owned: OwnedServices,
  ) {}

  static async start(requested: StackOptions = {}): Promise<TestStack> {
    const { owned, options } = await startTopology(requested);
    try {
      return await TestStack.startOn(options, owned);
    } catch (error) {
      await stopOwned(owned).catch(() => undefined);
      throw error;
    }
  }

  private static async startOn(options: StackOptions, owned: OwnedServices): Promise<TestStack> {
    const db = await createTestDatabase(options.databaseBaseUrl);
    const prefix = `{sy-e2e-${randomBytes(4).toString('hex')}}`;
    const tempDir = mkdtempSync(join(tmpdir(), 'switchyard-e2e-'));
    const started: ManagedProcess[] = [];
    let stack: TestStack | undefined;
    try {
      const ports = await simPorts();
      const sim = ManagedProcess.start('llm-sim', {
        LLM_SIM_TARGETS: simTargetsEnv(ports.targets),
        LLM_SIM_CONTROL_PORT: String(ports.control),
      });
      started.push(sim);
      await sim.waitForLine(/llm-sim listening/);

      const routerConfig = writeRouterConfigForSim(tempDir, ports.targets, options.editRouterConfig);

      const sharedEnv: Record<string, string> = {
        DATABASE_URL: db.url,
        REDIS_URL: options.redisUrl ?? 'redis://127.0.0.1:6379',
        QUEUE_PREFIX: prefix,
        ROUTER_CONFIG: routerConfig,
        ...(options.apiKeys ? { API_KEYS: options.apiKeys } : {}),
        ...(options.pooler ? { DATABASE_URL: options.pooler.pooled(db.url), DATABASE_POOL_MODE: 'transaction', MIGRATE_DATABASE_URL: db.url } : {}),
        ...options.env,
      };
      const { supervisor, port } = await startSupervisorOnFreePort(sharedEnv, 'supervisor', started);
      stack = new TestStack(db, prefix, sim, `http://127.0.0.1:${ports.control}`, supervisor, `http://127.0.0.1:${port}`, sharedEnv, tempDir, owned);
      for (let i = 0; i < (options.workers ?? 1); i += 1) await stack.startWorker();
      return stack;
    } catch (error) {
      // A stack that fails to start must not leave processes, a database or keys behind.
      if (stack) await stack.stopProcessesAndData().catch(() => undefined);
      else {
        await Promise.all(started.map((p) => p.stop()));
        await db.destroy().catch(() => undefined);
        rmSync(tempDir, { recursive: true, force: true });
      }
      throw error;
    }
  }

  async startWorker(env: Record<string, string> = {}): Promise<ManagedProcess> {
    const worker = ManagedProcess.start('worker', { ...this.sharedEnv, ...env }, `worker-${this.workers.length + 1}`);
    this.workers.push(worker);
    await worker.waitForLine(/worker consuming/);
    return worker;
  }

  /** Another supervisor on the same database and queues (its sweeper runs alongside the first one's). */
  async startSupervisor(env: Record<string, string> = {}): Promise<ManagedProcess> {
    const { supervisor, port } = await startSupervisorOnFreePort({ ...this.sharedEnv, ...env }, `supervisor-${this.extraSupervisors.length + 2}`, this.extraSupervisors);
    this.extraSupervisorUrls.push(`http://127.0.0.1:${port}`);
    return supervisor;
  }

  async request<T = unknown>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult<T>> {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${this.baseUrl}${path}`, init);
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: (text ? JSON.parse(text) : null) as T };
  }

  async waitForJob<T extends { status: string }>(jobId: string, headers: Record<string, string> = {}, timeoutMs = 60_000): Promise<T> {
    return waitFor(
      `job ${jobId} to finish`,
      async () => {
        const res = await this.request<T>('GET', `/v1/jobs/${jobId}`, undefined, headers);
        return ['success', 'failed', 'cancelled'].includes(res.json.status) ? res.json : undefined;
      },
      timeoutMs,
    );
  }

  async simCalls(): Promise<SimCall[]> {
    const res = await fetch(`${this.simControl}/calls`);
    return ((await res.json()) as { calls: SimCall[] }).calls;
  }

  async setSimMode(target: string, change: Record<string, unknown>): Promise<void> {
    const res = await fetch(`${this.simControl}/targets/${target}/mode`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(change),
    });
    if (res.status !== 200) throw new Error(`sim mode change failed: ${res.status} ${await res.text()}`);
  }

  async countRows(): Promise<number> {
    const result = await this.db.pool.query<{ n: number }>('select count(*)::int as n from agent_task_state');
    return result.rows[0]!.n;
  }

  async stop(): Promise<void> {
    await this.stopProcessesAndData();
    await stopOwned(this.owned);
  }

  private async stopProcessesAndData(): Promise<void> {
    await Promise.all([...this.workers, this.supervisor, ...this.extraSupervisors, this.sim].map((p) => p.stop()));
    // Through the stack's own topology (Sentinel, Cluster or one server), as the processes reached it.
    const redis = connectRedis(loadConfig(this.sharedEnv), 'switchyard-e2e-cleanup');
    redis.on('error', () => undefined);
    try {
      await deleteKeysWithPrefix(redis, this.prefix);
    } finally {
      redis.disconnect();
    }
    await this.db.destroy();
    rmSync(this.tempDir, { recursive: true, force: true });
  }

  /** Every process's recent output, for a failing test's message. */
  logs(): string {
    return [this.sim, this.supervisor, ...this.extraSupervisors, ...this.workers].map((p) => `--- ${p.name}\n${p.tail(40)}`).join('\n');
  }
}
