import { resolve } from 'node:path';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { Client } from 'pg';

/** The repository's `migrations/` folder, from both `src/` and the built `dist/`. */
export const MIGRATIONS_FOLDER = resolve(__dirname, '../../../migrations');

function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_-]{1,63}$/.test(name)) throw new Error(`unsupported database name "${name}" in DATABASE_URL`);
  return name;
}

function maintenanceUrl(url: string): string {
  const parsed = new URL(url);
  parsed.pathname = '/postgres';
  return parsed.toString();
}

/** Runs `work` on a connection to the server's `postgres` database, with the name of the database `url` names. */
async function onMaintenanceDatabase<T>(url: string, work: (client: Client, name: string) => Promise<T>): Promise<T> {
  const name = databaseName(url);
  const client = new Client({ connectionString: maintenanceUrl(url), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await work(client, name);
  } finally {
    await client.end();
  }
}

/** Creates the database named by `url` when it is missing and the role may. Returns whether it did. */
export function ensureDatabase(url: string): Promise<boolean> {
  return onMaintenanceDatabase(url, async (client, name) => {
    const existing = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (existing.rowCount) return false;
    try {
      await client.query(`create database "${name}"`);
    } catch (error) {
      // Another process created it between the check and the create.
      // (42P04 duplicate_database, or 23505 when both creates race past the catalog check.)
      if (['42P04', '23505'].includes((error as { code?: string }).code ?? '')) return false;
      throw new Error(`cannot create database "${name}"`, { cause: error });
    }
    return true;
  });
}

export async function dropDatabase(url: string): Promise<void> {
  await onMaintenanceDatabase(url, (client, name) => client.query(`drop database if exists "${name}" with (force)`));
}

const MIGRATION_LOCK_ID = 0x5377_5944; // "SwYD": one migrator at a time per database

export async function migrateDatabase(url: string, migrationsFolder = MIGRATIONS_FOLDER): Promise<void> {
  await ensureDatabase(url);
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await migrate(drizzle(client), { migrationsFolder });
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    await client.end();
  }
}
