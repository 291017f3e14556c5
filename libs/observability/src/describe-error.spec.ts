import { describeError } from './describe-error';
import { refusedLocalhostConnectError } from '@switchyard/devkit';

describe('describeError', () => {
  it('names every address of a refused dual-stack connect (an AggregateError with an empty message)', async () => {
    const { error, port } = await refusedLocalhostConnectError();
    expect(error.name).toBe('AggregateError');
    expect(error.message).toBe('');
    expect(describeError(error)).toMatch(new RegExp(`^connect E\\w+ ::1:${port}; connect ECONNREFUSED 127\\.0\\.0\\.1:${port}$`));
  });

  it('appends the cause', () => {
    expect(describeError(new Error('cannot migrate', { cause: new Error('connect ECONNREFUSED 127.0.0.1:5433') }))).toBe('cannot migrate (connect ECONNREFUSED 127.0.0.1:5433)');
  });

  it('does not repeat a cause the message already quotes', () => {
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:5433');
    expect(describeError(new Error(`cannot connect to Postgres at 127.0.0.1:5433/app: ${refused.message}`, { cause: refused }))).toBe(
      'cannot connect to Postgres at 127.0.0.1:5433/app: connect ECONNREFUSED 127.0.0.1:5433',
    );
  });

  it('keeps a plain message and stringifies a non-error', () => {
    expect(describeError(new Error('boom'))).toBe('boom');
    expect(describeError('text')).toBe('text');
  });
});
