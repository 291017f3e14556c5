import { refusedLocalhostConnectError } from '@switchyard/devkit';
import { isDatabaseUnavailable } from './database-unavailable';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a reset connection', withCode('read ECONNRESET', 'ECONNRESET')],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
    ['the pool timing out on connect', new Error('timeout exceeded when trying to connect')],
    ['SQLSTATE class 08', withCode('connection failure', '08006')],
    ['the server shutting down (57P01)', withCode('terminating connection due to administrator command', '57P01')],
    ['the server starting (57P03)', withCode('the database system is starting up', '57P03')],
    ['a driver error wrapped by drizzle', new Error('Failed query: select 1', { cause: withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED') })],
  ])('is true for %s', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it('is true for a refused dual-stack localhost (AggregateError)', async () => {
    expect(isDatabaseUnavailable((await refusedLocalhostConnectError()).error)).toBe(true);
  });

  it.each([
    ['a unique violation', withCode('duplicate key value violates unique constraint', '23505')],
    ['a syntax error', withCode('syntax error at or near "selct"', '42601')],
    ['a plain error', new Error('boom')],
    ['a non-error', 'ECONNREFUSED'],
  ])('is false for %s', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
