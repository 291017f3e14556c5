import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { Client, type Pool } from 'pg';
import { describeError } from '@switchyard/observability';

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

/**
 * A connected client, or an error naming the server and every address tried: a refused
 * `localhost` (::1 and 127.0.0.1) is otherwise an AggregateError with an empty message.
 */
async function connectClient(url: string): Promise<Client> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (error) {
    const { host, pathname } = new URL(url);
    throw new Error(`cannot connect to Postgres at ${host}${pathname}: ${describeError(error)}`, { cause: error });
  }
  return client;
}

/** Runs `work` on a connection to the server's `postgres` database, with the name of the database `url` names. */
async function onMaintenanceDatabase<T>(url: string, work: (client: Client, name: string) => Promise<T>): Promise<T> {
  const name = databaseName(url);
  const client = await connectClient(maintenanceUrl(url));
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
  const client = await connectClient(url);
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await migrate(drizzle(client), { migrationsFolder });
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    await client.end();
  }
}

/** One migration of the journal drizzle-kit writes (`meta/_journal.json`); `when` is drizzle's `created_at`. */
export interface JournalMigration {
  tag: string;
  when: number;
}

/** The migrations shipped in `migrationsFolder`, in order. */
export function shippedMigrations(migrationsFolder = MIGRATIONS_FOLDER): JournalMigration[] {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: JournalMigration[] };
  return journal.entries.map(({ tag, when }) => ({ tag, when }));
}

/**
 * The shipped migrations a database has not applied. drizzle records each applied migration
 * with the journal's `when` as `created_at`, so that is what is matched.
 */
export function missingMigrations(shipped: readonly JournalMigration[], appliedCreatedAt: readonly number[]): string[] {
  const applied = new Set(appliedCreatedAt);
  return shipped.filter((migration) => !applied.has(migration.when)).map((migration) => migration.tag);
}

const UNDEFINED_TABLE = '42P01';
const INVALID_SCHEMA_NAME = '3F000';

/** The tags of the shipped migrations this database lacks (all of them when it was never migrated). */
export async function pendingMigrations(pool: Pick<Pool, 'query'>, migrationsFolder = MIGRATIONS_FOLDER): Promise<string[]> {
  const shipped = shippedMigrations(migrationsFolder);
  let applied: number[];
  try {
    const { rows } = await pool.query<{ created_at: string | number }>('select created_at from drizzle.__drizzle_migrations');
    applied = rows.map((row) => Number(row.created_at));
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== UNDEFINED_TABLE && code !== INVALID_SCHEMA_NAME) throw error;
    applied = [];
  }
  return missingMigrations(shipped, applied);
}
