import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Pool } from 'pg';
import { createLogger } from './logger';

// Real Postgres errors (no database of our own is needed: the queries fail before touching a table).
const pool = new Pool({ connectionString: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', max: 1 });

afterAll(async () => {
  await pool.end();
});

const SSN = '078-05-1120';
// What a sensitive job's document looked like in the repro: Postgres refuses the NUL and quotes the text around it.
const submitted = JSON.stringify({ documents: [{ id: 'a', text: `patient SSN ${SSN} hello\u0000world` }] });

function capturingLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger('test', 'info', destination), lines };
}

async function failure(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the query to fail');
}

describe('the logger with a real Postgres error', () => {
  it('keeps the code and drops the quoted request content of a pg error', async () => {
    const error = await failure(() => pool.query('select $1::jsonb', [submitted]));
    expect(JSON.stringify({ ...error, message: error.message })).toContain(SSN); // the repro: `where` quotes the input

    const { logger, lines } = capturingLogger();
    logger.error({ err: error }, 'request failed');
    const line = JSON.parse(lines.join('')) as { err: Record<string, unknown> };
    expect(lines.join('')).not.toContain(SSN);
    expect(lines.join('')).not.toContain('hello');
    expect(line.err).toMatchObject({ code: '22P05', severity: 'ERROR', message: 'unsupported Unicode escape sequence' });
    expect(line.err).not.toHaveProperty('where');
    expect(line.err).not.toHaveProperty('detail');
  });

  it('drops the parameters drizzle puts in its message, and the values Postgres quotes, along the cause chain', async () => {
    const db = drizzle(pool);
    const error = await failure(() => db.execute(sql`select ${`${SSN} not a uuid`}::uuid`));
    expect(`${error.message} ${String(error.cause)}`).toContain(SSN);

    const { logger, lines } = capturingLogger();
    logger.warn({ err: error }, 'query failed');
    const text = lines.join('');
    expect(text).not.toContain(SSN);
    const line = JSON.parse(text) as { err: { message: string; query?: string; code?: string } };
    expect(line.err.message).toContain('Failed query: select $1::uuid');
    expect(line.err.message).toContain('invalid input syntax for type uuid: "[redacted]"');
  });
});
