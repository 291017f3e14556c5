import { redactDatabaseMessage, serializeError } from './error-serializer';

describe('serializeError', () => {
  it('drops the parameters from a drizzle query error already turned into text', () => {
    const text = 'DrizzleQueryError: Failed query: insert into agent_task_state (input) values ($1)\nparams: {"text":"SSN 078-05-1120"}';
    expect(serializeError(text)).toBe('DrizzleQueryError: Failed query: insert into agent_task_state (input) values ($1)');
    expect(serializeError('a plain "quoted" reason')).toBe('a plain "quoted" reason');
  });

  it('leaves errors that are not from the database as pino shows them', () => {
    const error = Object.assign(new Error('boom "x"'), { detail: 'kept: not a database error' });
    expect(serializeError(error)).toMatchObject({ type: 'Error', message: 'boom "x"', detail: 'kept: not a database error' });
  });

  it('redacts quoted values and bytes from a Postgres message', () => {
    expect(redactDatabaseMessage('invalid input syntax for type uuid: "078-05-1120"')).toBe('invalid input syntax for type uuid: "[redacted]"');
    expect(redactDatabaseMessage('invalid byte sequence for encoding "UTF8": 0x00')).toBe('invalid byte sequence for encoding "[redacted]": 0x[redacted]');
  });
});
