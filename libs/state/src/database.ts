import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { Client, Pool, type PoolConfig } from 'pg';
import * as schema from './schema';

export type Database = NodePgDatabase<typeof schema>;

export interface DatabaseHandle {
  db: Database;
  pool: Pool;
  close(): Promise<void>;
}

/**
 * `session`: every pooled connection is a Postgres session of its own, so a named prepared
 * statement is parsed once per connection and reused. `transaction`: the connections go
 * through a transaction pooler (PgBouncer, RDS Proxy, Supavisor), where consecutive
 * statements may run on different server sessions, so no statement is named.
 */
export type DatabasePoolMode = 'session' | 'transaction';

/** A query config without its statement name; anything else (text, a Submittable) as given. */
export function withoutStatementName(config: unknown): unknown {
  const named = typeof config === 'object' && config !== null && 'name' in config && typeof (config as { submit?: unknown }).submit !== 'function';
  return named ? { ...(config as object), name: undefined } : config;
}

/**
 * A pg client that sends every statement unnamed (Parse/Bind/Execute of the unnamed
 * statement, in one round trip as before). The repositories keep naming their statements
 * (`pool.query({ name, … })`); this is the one place where transaction pool mode drops
 * the names.
 */
export class UnnamedStatementClient extends Client {}
const namedQuery = Client.prototype.query as (this: Client, ...args: unknown[]) => unknown;
// Assigned rather than overridden in the class body: `query` has a dozen overloads that a method cannot restate.
Object.defineProperty(UnnamedStatementClient.prototype, 'query', {
  value(this: Client, config: unknown, ...rest: unknown[]) {
    return namedQuery.call(this, withoutStatementName(config), ...rest);
  },
  writable: true,
  configurable: true,
});

export interface ConnectDatabaseOptions extends Pick<PoolConfig, 'max' | 'application_name'> {
  poolMode?: DatabasePoolMode;
}

export function connectDatabase(url: string, options: ConnectDatabaseOptions = {}): DatabaseHandle {
  const pool = new Pool({
    ...(options.poolMode === 'transaction' ? { Client: UnnamedStatementClient } : {}),
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
  // A checked-out client has no listener of the pool's: one that loses its connection between two
  // statements of a transaction (a Postgres restart mid-transaction) emitted an 'error' nobody
  // heard, and that crashed the process (the e2e Postgres-restart drill, seen in CI). Its next
  // statement fails instead, and the pool drops it when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
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

const BACKEND_PID_SQL = 'select pg_backend_pid() as pid';

/**
 * Whether `url` leads to a transaction pooler rather than to Postgres sessions: two clients
 * each hold a server connection in a transaction, release them (B first, then A), and B asks
 * again which server process serves it. A session (direct, or a session-mode pooler) keeps
 * its process; a transaction pooler hands B the connection A released last (PgBouncer's
 * default LIFO). A `false` is not proof (a pooler with one server connection looks direct).
 */
export async function servedByTransactionPooler(url: string): Promise<boolean> {
  const a = new Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  const b = new Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await a.connect();
    await b.connect();
    const pidOf = async (client: Client): Promise<number> => (await client.query<{ pid: number }>(BACKEND_PID_SQL)).rows[0]!.pid;
    await a.query('begin');
    await pidOf(a);
    await b.query('begin');
    const before = await pidOf(b);
    await b.query('commit');
    await a.query('commit');
    const after = await pidOf(b);
    return before !== after;
  } finally {
    await Promise.allSettled([a.end(), b.end()]);
  }
}
