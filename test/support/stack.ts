import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import IORedis from 'ioredis';
import { createTestDatabase, type TestDatabase } from '@switchyard/state/testing/test-database';
import { SIM_TARGETS, simTargetsEnv, writeRouterConfigForSim } from '../../apps/demo/src/sim-targets';
import { ManagedProcess, freePort, waitFor } from './processes';

export { SIM_TARGETS };


export interface SimCall {
  seq: number;
  target: string;
  outcome: string;
  status: number | string;
  headers: Record<string, string>;
  last_user_message_preview: string;
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
}

/**
 * The real processes — llm-sim, supervisor, workers — built from this checkout, on free
 * ports, against a fresh database and a Redis key prefix of their own. The router config
 * is the shipped config/router.yaml with its endpoints moved to this sim's ports.
 */
export class TestStack {
  readonly workers: ManagedProcess[] = [];
  private constructor(
    readonly db: TestDatabase,
    readonly prefix: string,
    readonly sim: ManagedProcess,
    readonly simControl: string,
    readonly supervisor: ManagedProcess,
    readonly baseUrl: string,
    readonly sharedEnv: Record<string, string>,
    private readonly tempDir: string,
  ) {}

  static async start(options: StackOptions = {}): Promise<TestStack> {
    const db = await createTestDatabase();
    const prefix = `{sy-e2e-${randomBytes(4).toString('hex')}}`;
    const tempDir = mkdtempSync(join(tmpdir(), 'switchyard-e2e-'));
    const simPorts = await Promise.all(SIM_TARGETS.map(() => freePort()));
    const controlPort = await freePort();
    const sim = ManagedProcess.start('llm-sim', {
      LLM_SIM_TARGETS: simTargetsEnv(simPorts),
      LLM_SIM_CONTROL_PORT: String(controlPort),
    });
    await sim.waitForLine(/llm-sim listening/);

    const routerConfig = writeRouterConfigForSim(tempDir, simPorts);

    const port = await freePort();
    const sharedEnv: Record<string, string> = {
      DATABASE_URL: db.url,
      REDIS_URL: 'redis://127.0.0.1:6379',
      QUEUE_PREFIX: prefix,
      ROUTER_CONFIG: routerConfig,
      ...(options.apiKeys ? { API_KEYS: options.apiKeys } : {}),
      ...options.env,
    };
    const supervisor = ManagedProcess.start('supervisor', { ...sharedEnv, PORT: String(port) });
    await supervisor.waitForLine(/supervisor listening/);
    const stack = new TestStack(db, prefix, sim, `http://127.0.0.1:${controlPort}`, supervisor, `http://127.0.0.1:${port}`, sharedEnv, tempDir);
    for (let i = 0; i < (options.workers ?? 1); i += 1) await stack.startWorker();
    return stack;
  }

  async startWorker(env: Record<string, string> = {}): Promise<ManagedProcess> {
    const worker = ManagedProcess.start('worker', { ...this.sharedEnv, ...env }, `worker-${this.workers.length + 1}`);
    this.workers.push(worker);
    await worker.waitForLine(/worker consuming/);
    return worker;
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
    await Promise.all([...this.workers, this.supervisor, this.sim].map((p) => p.stop()));
    const redis = new IORedis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${this.prefix}:*`, 'COUNT', 1000);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
    await this.db.destroy();
    rmSync(this.tempDir, { recursive: true, force: true });
  }

  /** Every process's recent output, for a failing test's message. */
  logs(): string {
    return [this.sim, this.supervisor, ...this.workers].map((p) => `--- ${p.name}\n${p.tail(40)}`).join('\n');
  }
}
