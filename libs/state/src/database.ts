import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { Pool, type PoolConfig } from 'pg';
import * as schema from './schema';

export type Database = NodePgDatabase<typeof schema>;

export interface DatabaseHandle {
  db: Database;
  pool: Pool;
  close(): Promise<void>;
}

export function connectDatabase(url: string, options: Pick<PoolConfig, 'max' | 'application_name'> = {}): DatabaseHandle {
  const pool = new Pool({
    connectionString: url,
    max: options.max ?? 16,
    application_name: options.application_name ?? 'switchyard',
    // A dead server must surface as an error the caller can retry, not a hang.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection (Postgres restart) is reported here; without a
  // listener it would crash the process. The pool replaces the client on next use.
  pool.on('error', () => undefined);
  const db = drizzle(pool, { schema });
  return { db, pool, close: () => pool.end() };
}

/** The pg pool behind a drizzle handle: `pool` when given (`DatabaseHandle.pool`), else drizzle's own client. */
export function poolBehind(db: Database, pool: Pool | undefined, user: string): Pool {
  const client = pool ?? (db as Database & { $client?: Pool }).$client;
  if (!client) throw new Error(`${user} needs the pg pool behind the database handle`);
  return client;
}

export async function pingDatabase(pool: Pool): Promise<void> {
  await pool.query('select 1');
}
