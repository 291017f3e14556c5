/**
 * Drill: Postgres behind PgBouncer in transaction mode (Debian's pgbouncer 1.18, no
 * prepared-statement support), a pooler of this test's own. The doc_review and admission /
 * webhooks / events e2e specs (advisory transaction locks; LISTEN on the direct URL) run
 * unchanged with every process's DATABASE_URL going through a pooler
 * (DATABASE_POOL_MODE=transaction) and migrations through MIGRATE_DATABASE_URL; and a
 * process left in session mode behind the pooler stops at start, naming the variable.
 */
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { Client } from 'pg';
import { dropDatabase } from '@switchyard/state';
import { PrivatePgBouncer } from '../support/ha-services';
import { ManagedProcess, REPO_ROOT, freePort } from '../support/processes';
import { TestStack, useTopologyForNewStacks } from '../support/stack';
// The existing end-to-end specs, unchanged, run again here on this topology (recovery: pgbouncer-recovery.e2e-spec.ts).
import './doc-review.e2e-spec';
import './admission-webhooks-events.e2e-spec';

jest.setTimeout(150_000);

const DIRECT_BASE = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

describe('drill: PgBouncer in transaction mode — start-up and migrations', () => {
  let bouncer: PrivatePgBouncer | undefined;
  let stack: TestStack | undefined;
  const createdDatabases: string[] = [];

  beforeAll(async () => {
    bouncer = await PrivatePgBouncer.start();
    stack = await TestStack.start({ workers: 0, pooler: bouncer });
  });

  afterAll(async () => {
    await stack?.stop();
    await bouncer?.stop();
    for (const url of createdDatabases) await dropDatabase(url).catch(() => undefined);
  });

  it('a supervisor left in DATABASE_POOL_MODE=session behind the pooler stops at start and names the variable', async () => {
    const supervisor = ManagedProcess.start('supervisor', { ...stack!.sharedEnv, DATABASE_POOL_MODE: 'session', PORT: String(await freePort()) }, 'supervisor-session-mode');
    const code = await supervisor.waitForExit(30_000);
    expect(code).toBe(78);
    expect(supervisor.output.join('\n')).toMatch(/DATABASE_POOL_MODE: is session, but DATABASE_URL leads to a transaction pooler/);
  });

  it('npm run db:migrate applies the migrations through MIGRATE_DATABASE_URL while DATABASE_URL goes through the pooler', async () => {
    const direct = new URL(DIRECT_BASE);
    direct.pathname = `/switchyard_test_${randomBytes(6).toString('hex')}`;
    createdDatabases.push(direct.toString());
    const child = spawn(process.execPath, [resolve(REPO_ROOT, 'libs/state/dist/cli/migrate.js')], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: bouncer!.pooled(direct.toString()), DATABASE_POOL_MODE: 'transaction', MIGRATE_DATABASE_URL: direct.toString() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const migrate = new ManagedProcess('migrate', child);
    expect(await migrate.waitForExit(60_000)).toBe(0);
    expect(migrate.output.join('\n')).toContain('"via":"MIGRATE_DATABASE_URL"');
    const client = new Client({ connectionString: direct.toString() });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>("select count(*)::int as n from information_schema.tables where table_name = 'agent_task_state'");
      expect(rows[0]!.n).toBe(1);
    } finally {
      await client.end();
    }
  });
});

// Set while the modules load, read when their hooks start stacks: every stack from here on is behind a PgBouncer of its own.
useTopologyForNewStacks('pgbouncer');
