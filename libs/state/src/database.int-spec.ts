import { connectDatabase, servedByTransactionPooler, type DatabaseHandle } from './database';

const URL_DIRECT = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The statement names prepared on the one connection of a one-connection pool. */
async function preparedStatementNames(handle: DatabaseHandle): Promise<string[]> {
  const { rows } = await handle.pool.query<{ name: string }>('select name from pg_prepared_statements order by name');
  return rows.map((row) => row.name);
}

describe('connectDatabase pool mode (real Postgres)', () => {
  const handles: DatabaseHandle[] = [];
  afterEach(async () => {
    await Promise.all(handles.splice(0).map((h) => h.close()));
  });

  const open = (poolMode: 'session' | 'transaction'): DatabaseHandle => {
    const handle = connectDatabase(URL_DIRECT, { max: 1, application_name: 'switchyard-test-pool-mode', poolMode });
    handles.push(handle);
    return handle;
  };

  it('session mode prepares a named statement once per connection and reuses it', async () => {
    const handle = open('session');
    for (const n of [1, 2]) {
      const { rows } = await handle.pool.query<{ n: number }>({ name: 'sy-test-named', text: 'select $1::int as n', values: [n] });
      expect(rows[0]!.n).toBe(n);
    }
    expect(await preparedStatementNames(handle)).toEqual(['sy-test-named']);
  });

  it('transaction mode sends the same named queries unnamed, through pool.query and a checked-out client alike', async () => {
    const handle = open('transaction');
    const { rows } = await handle.pool.query<{ n: number }>({ name: 'sy-test-named', text: 'select $1::int as n', values: [7] });
    expect(rows[0]!.n).toBe(7);
    const client = await handle.pool.connect();
    try {
      await client.query('begin');
      const inTransaction = await client.query<{ n: number }>({ name: 'sy-test-in-tx', text: 'select $1::int + 1 as n', values: [7] });
      expect(inTransaction.rows[0]!.n).toBe(8);
      await client.query('commit');
    } finally {
      client.release();
    }
    expect(await preparedStatementNames(handle)).toEqual([]);
  });

  it('a direct connection is not taken for a transaction pooler', async () => {
    await expect(servedByTransactionPooler(URL_DIRECT)).resolves.toBe(false);
  });
});

describe('connectDatabase when Postgres drops a connection (real Postgres)', () => {
  it('a client checked out between two statements of a transaction fails its next statement, and the process does not crash', async () => {
    const handle = connectDatabase(URL_DIRECT, { max: 2, application_name: 'switchyard-test-dropped' });
    const killer = connectDatabase(URL_DIRECT, { max: 1, application_name: 'switchyard-test-killer' });
    const crashes: unknown[] = [];
    const onUncaught = (error: unknown) => crashes.push(error);
    // Jest's own handler would fail the run; this one counts what would have taken a process down.
    process.prependListener('uncaughtException', onUncaught);
    try {
      const client = await handle.pool.connect();
      await client.query('begin');
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      // What a Postgres restart does to every connection (fast shutdown), here to this one alone.
      await killer.pool.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(crashes).toEqual([]);
      await expect(client.query('select 1')).rejects.toThrow();
      client.release(true);
      // The pool goes on with a new connection.
      expect((await handle.pool.query<{ n: number }>('select 1 as n')).rows[0]!.n).toBe(1);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      await handle.close();
      await killer.close();
    }
  });
});
