/**
 * Operator-facing edges, with the real processes: endpoint credentials never shown or shared,
 * /readyz naming migrations a database lacks, and a Postgres outage answered as 503 with
 * Retry-After rather than 500.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import IORedis, { Cluster } from 'ioredis';
import { loadConfig } from '@switchyard/config';
import { connectRedis, deleteKeysWithPrefix, snapshotKey, type RedisConnection } from '@switchyard/platform';
import { ensureDatabase, migrateDatabase, shippedMigrations } from '@switchyard/state';
import { PrivatePostgres } from '../support/private-services';
import { ManagedProcess, freePort, simPorts, waitFor, writeRouterConfigForSim } from '../support/processes';
import { TestStack } from '../support/stack';

jest.setTimeout(150_000);

const SECRET = 'e2e-endpoint-password';
const ADMIN_TOKEN = 'admin-token-for-operator-edges-e2e';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe('credentials in target endpoints', () => {
  let stack: TestStack;
  let redis: RedisConnection;

  beforeAll(async () => {
    stack = await TestStack.start({
      workers: 1,
      env: { ADMIN_TOKEN },
      editRouterConfig: (yaml) => yaml.replaceAll('endpoint: http://127.0.0.1:', `endpoint: http://switchyard:${SECRET}@127.0.0.1:`),
    });
    redis = connectRedis(loadConfig(stack.sharedEnv), 'operator-edges-e2e');
  });

  afterAll(async () => {
    redis?.disconnect();
    await stack?.stop();
  });

  it('are neither shown by GET /admin/targets nor stored in the Redis snapshots, and the targets still serve', async () => {
    const completion = await stack.request('POST', '/v1/chat/completions', {
      messages: [{ role: 'user', content: 'extract the parties from this contract.' }],
      metadata: { task_type: 'extract', complexity: 'low' },
    });
    expect(completion.status).toBe(200);

    // Both the supervisor's and the worker's reports, so every publisher is covered.
    const targets = await waitFor('the worker in the fleet view', async () => {
      const res = await stack.request<{ targets: { endpoint: string }[]; fleet: { processes: { role: string }[] } | null }>('GET', '/admin/targets', undefined, ADMIN);
      return res.json.fleet?.processes.some((p) => p.role === 'worker') ? res : undefined;
    });
    expect(targets.status).toBe(200);
    expect(JSON.stringify(targets.json)).not.toContain(SECRET);
    for (const target of targets.json.targets) expect(target.endpoint).toMatch(/^http:\/\/\*\*\*@127\.0\.0\.1:\d+\/v1$/);

    // On a Redis Cluster (SWITCHYARD_E2E_TOPOLOGY=cluster) KEYS answers for one node only: ask every master.
    const pattern = snapshotKey(stack.prefix, '*');
    const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
    const keys = (await Promise.all(nodes.map((node) => node.keys(pattern)))).flat();
    expect(keys.length).toBeGreaterThanOrEqual(2);
    for (const value of await Promise.all(keys.map((key) => redis.get(key)))) {
      expect(value).toContain('***@127.0.0.1');
      expect(value).not.toContain(SECRET);
    }
  });
});

describe('supervisor readiness and a Postgres outage', () => {
  let postgres: PrivatePostgres;
  let supervisor: ManagedProcess;
  let baseUrl: string;
  let databaseUrl: string;
  const prefix = `{sy-e2e-${randomBytes(4).toString('hex')}}`;
  const tempDir = mkdtempSync(join(tmpdir(), 'switchyard-e2e-'));

  beforeAll(async () => {
    postgres = await PrivatePostgres.start();
    const url = new URL(postgres.baseUrl);
    url.pathname = '/switchyard_unmigrated';
    databaseUrl = url.toString();
    // Created, never migrated.
    await ensureDatabase(databaseUrl);
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    supervisor = ManagedProcess.start('supervisor', {
      DATABASE_URL: databaseUrl,
      REDIS_URL: 'redis://127.0.0.1:6379',
      QUEUE_PREFIX: prefix,
      ROUTER_CONFIG: writeRouterConfigForSim(tempDir, (await simPorts()).targets),
      PORT: String(port),
    });
    await supervisor.waitForLine(/supervisor listening/);
  });

  afterAll(async () => {
    await supervisor?.stop();
    const redis = new IORedis('redis://127.0.0.1:6379');
    try {
      await deleteKeysWithPrefix(redis, prefix);
    } finally {
      redis.disconnect();
    }
    await postgres?.destroy();
    rmSync(tempDir, { recursive: true, force: true });
  });

  const readyz = async () => {
    const res = await fetch(`${baseUrl}/readyz`);
    return { status: res.status, json: (await res.json()) as { status: string; checks: { name: string; ok: boolean; missing?: string[] }[] } };
  };

  it('/readyz answers 503 naming every migration the database lacks, and 200 once they are applied', async () => {
    const before = await readyz();
    expect(before.status).toBe(503);
    expect(before.json.status).toBe('not_ready');
    expect(before.json.checks.find((c) => c.name === 'postgres')?.ok).toBe(true);
    expect(before.json.checks.find((c) => c.name === 'migrations')).toMatchObject({ ok: false, missing: shippedMigrations().map((m) => m.tag) });

    await migrateDatabase(databaseUrl);
    const after = await waitFor('/readyz to pass', async () => {
      const res = await readyz();
      return res.status === 200 ? res : undefined;
    });
    expect(after.json.checks.find((c) => c.name === 'migrations')).toEqual({ name: 'migrations', ok: true });
  });

  it('answers a request that needs the stopped database with 503 database_unavailable and Retry-After', async () => {
    postgres.stopServer();
    const res = await fetch(`${baseUrl}/v1/jobs/00000000-0000-4000-8000-000000000001`);
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('database_unavailable');
  });
});
