import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { MIGRATIONS_FOLDER, dropDatabase, ensureDatabase, migrateDatabase } from './migrate';

const BASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const created: string[] = [];

/** A database name nobody has used; dropped again in afterAll. */
function freshUrl(): string {
  const url = new URL(BASE_URL);
  url.pathname = `/switchyard_test_${randomBytes(6).toString('hex')}`;
  created.push(url.toString());
  return url.toString();
}

async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function databaseExists(url: string): Promise<boolean> {
  const name = new URL(url).pathname.slice(1);
  return withClient(BASE_URL, async (c) => ((await c.query('select 1 from pg_database where datname = $1', [name])).rowCount ?? 0) > 0);
}

const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] };

afterAll(async () => {
  for (const url of created) await dropDatabase(url);
});

describe('migrateDatabase', () => {
  it('creates a missing database and applies every migration', async () => {
    const url = freshUrl();
    expect(await databaseExists(url)).toBe(false);

    await migrateDatabase(url);
    expect(await databaseExists(url)).toBe(true);
    const applied = await withClient(url, async (c) => (await c.query('select count(*)::int as n from drizzle.__drizzle_migrations')).rows[0].n);
    expect(applied).toBe(journal.entries.length);
    const table = await withClient(url, async (c) => (await c.query("select to_regclass('public.agent_task_state') as t")).rows[0].t);
    expect(table).toBe('agent_task_state');
  });

  it('is idempotent: a second run applies nothing and keeps the data', async () => {
    const url = freshUrl();
    await migrateDatabase(url);
    await withClient(url, (c) =>
      c.query(`insert into agent_task_state (task_id, job_id, tenant_id, job_type, agent_id, role, input_summary, total_steps)
               values ('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000001', 't', 'doc_review', 'supervisor', 'job', '{}', 1)`),
    );

    await migrateDatabase(url);
    await withClient(url, async (c) => {
      expect((await c.query('select count(*)::int as n from drizzle.__drizzle_migrations')).rows[0].n).toBe(journal.entries.length);
      expect((await c.query('select count(*)::int as n from agent_task_state')).rows[0].n).toBe(1);
    });
  });

  it('lets several migrators start at once against a missing database', async () => {
    const url = freshUrl();
    const results = await Promise.allSettled([migrateDatabase(url), migrateDatabase(url), migrateDatabase(url)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    const applied = await withClient(url, async (c) => (await c.query('select count(*)::int as n from drizzle.__drizzle_migrations')).rows[0].n);
    expect(applied).toBe(journal.entries.length);
  });

  it('creates the indexes the schema names, including the partial ones', async () => {
    const url = freshUrl();
    await migrateDatabase(url);
    const indexes = await withClient(url, async (c) => {
      const { rows } = await c.query<{ indexname: string; indexdef: string }>(
        "select indexname, indexdef from pg_indexes where schemaname = 'public' and tablename = 'agent_task_state'",
      );
      return new Map(rows.map((r) => [r.indexname, r.indexdef]));
    });

    expect([...indexes.keys()].sort()).toEqual(
      [
        'agent_task_state_pkey',
        'agent_task_state_status_updated_idx',
        'agent_task_state_parent_idx',
        'agent_task_state_job_idx',
        'agent_task_state_running_heartbeat_idx',
        'agent_task_state_pending_idx',
        'agent_task_state_tenant_jobs_idx',
        'agent_task_state_tenant_status_jobs_idx',
        'agent_task_state_jobs_idx',
        'agent_task_state_status_jobs_idx',
        'agent_task_state_resumed_idx',
        'agent_task_state_resumed_unfinished_idx',
        'agent_task_state_idempotency_idx',
      ].sort(),
    );
    expect(indexes.get('agent_task_state_status_updated_idx')).toMatch(/\(status, updated_at\)$/);
    expect(indexes.get('agent_task_state_parent_idx')).toMatch(/\(parent_task_id\)$/);

    const running = indexes.get('agent_task_state_running_heartbeat_idx')!;
    expect(running).toMatch(/\(updated_at\)/);
    expect(running).toMatch(/WHERE \(status = 'running'::task_status\)/);

    const pending = indexes.get('agent_task_state_pending_idx')!;
    expect(pending).toMatch(/\(updated_at, task_id\)/);
    expect(pending).toMatch(/WHERE \(status = 'pending'::task_status\)/);

    const jobs = indexes.get('agent_task_state_tenant_jobs_idx')!;
    expect(jobs).toMatch(/\(tenant_id, created_at DESC NULLS LAST, task_id DESC NULLS LAST\)/);
    expect(jobs).toMatch(/WHERE \(parent_task_id IS NULL\)/);

    // The job lists across tenants and by status (migration 0009): root rows, in the lists' order.
    for (const [name, columns] of [
      ['agent_task_state_tenant_status_jobs_idx', 'tenant_id, status, created_at DESC NULLS LAST, task_id DESC NULLS LAST'],
      ['agent_task_state_jobs_idx', 'created_at DESC NULLS LAST, task_id DESC NULLS LAST'],
      ['agent_task_state_status_jobs_idx', 'status, created_at DESC NULLS LAST, task_id DESC NULLS LAST'],
    ] as const) {
      expect(indexes.get(name)).toContain(`(${columns}) WHERE (parent_task_id IS NULL)`);
    }
    expect(indexes.get('agent_task_state_resumed_idx')).toMatch(/\(updated_at\) WHERE \(\(retry_count > 0\) AND \(parent_task_id IS NOT NULL\)\)/);
    expect(indexes.get('agent_task_state_resumed_unfinished_idx')).toMatch(
      /\(updated_at\) WHERE \(\(retry_count > 0\) AND \(status = ANY \(ARRAY\['pending'::task_status, 'running'::task_status, 'paused'::task_status\]\)\) AND \(parent_task_id IS NOT NULL\)\)/,
    );

    const idempotency = indexes.get('agent_task_state_idempotency_idx')!;
    expect(idempotency).toMatch(/^CREATE UNIQUE INDEX/);
    expect(idempotency).toMatch(/\(tenant_id, idempotency_key\)/);
    expect(idempotency).toMatch(/WHERE \(\(parent_task_id IS NULL\) AND \(idempotency_key IS NOT NULL\)\)/);
  });
});

describe('ensureDatabase and dropDatabase', () => {
  it('reports whether it created the database, and drop removes it', async () => {
    const url = freshUrl();
    expect(await ensureDatabase(url)).toBe(true);
    expect(await ensureDatabase(url)).toBe(false);
    await dropDatabase(url);
    expect(await databaseExists(url)).toBe(false);
    await expect(dropDatabase(url)).resolves.toBeUndefined();
  });

  it('refuses a database name it cannot quote safely', async () => {
    await expect(ensureDatabase('postgres://postgres@127.0.0.1:5432/bad%22name')).rejects.toThrow('unsupported database name');
    await expect(ensureDatabase('postgres://postgres@127.0.0.1:5432/')).rejects.toThrow('unsupported database name');
  });
});
