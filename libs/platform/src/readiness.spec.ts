import type { Redis } from 'ioredis';
import { refusedLocalhostConnectError } from '@switchyard/devkit';
import { shippedMigrations, type DatabaseHandle } from '@switchyard/state';
import { MigrationsReadiness, checkDependencies } from './readiness';

const redisAnswering = { ping: () => Promise.resolve('PONG') } as unknown as Redis;

function databaseFailingWith(error: Error): DatabaseHandle {
  return { pool: { query: () => Promise.reject(error) } } as unknown as DatabaseHandle;
}

describe('checkDependencies', () => {
  it('names every address tried when Postgres at localhost refuses (not an empty AggregateError message)', async () => {
    const { error, port } = await refusedLocalhostConnectError();
    const checks = await checkDependencies(databaseFailingWith(error), redisAnswering);
    const postgres = checks.find((c) => c.name === 'postgres');
    expect(postgres?.ok).toBe(false);
    expect(postgres?.error).toContain(`::1:${port}`);
    expect(postgres?.error).toContain(`127.0.0.1:${port}`);
  });
});

describe('MigrationsReadiness', () => {
  const migrationsTable = (createdAt: () => number[]) => {
    const queries: string[] = [];
    const pool = {
      query: (sql: string) => {
        queries.push(sql);
        return Promise.resolve({ rows: createdAt().map((created_at) => ({ created_at: String(created_at) })) });
      },
    };
    return { pool, queries };
  };

  it('names the missing migrations and asks again until they are applied, then keeps the answer', async () => {
    const shipped = shippedMigrations();
    let applied = shipped.slice(0, 1).map((m) => m.when);
    const { pool, queries } = migrationsTable(() => applied);
    const readiness = new MigrationsReadiness(pool as never);

    expect(await readiness.check()).toMatchObject({ name: 'migrations', ok: false, missing: shipped.slice(1).map((m) => m.tag) });
    expect(queries).toHaveLength(1);

    applied = shipped.map((m) => m.when);
    expect(await readiness.check()).toEqual({ name: 'migrations', ok: true });
    expect(await readiness.check()).toEqual({ name: 'migrations', ok: true });
    expect(queries).toHaveLength(2);
  });

  it('reports every shipped migration for a database drizzle never touched', async () => {
    const undefinedTable = Object.assign(new Error('relation "drizzle.__drizzle_migrations" does not exist'), { code: '42P01' });
    const readiness = new MigrationsReadiness({ query: () => Promise.reject(undefinedTable) } as never);
    expect((await readiness.check()).missing).toEqual(shippedMigrations().map((m) => m.tag));
  });
});
