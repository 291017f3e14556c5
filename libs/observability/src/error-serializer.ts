import pino from 'pino';

/** What a database error may keep: where and why it failed, never the values it was given. */
const DATABASE_ERROR_FIELDS = ['code', 'severity', 'constraint', 'table', 'column', 'schema', 'dataType', 'routine', 'query'] as const;

/** A Postgres error as node-postgres raises it: a severity and a five-character SQLSTATE. */
function isPostgresError(error: Error): boolean {
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  return typeof severity === 'string' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** drizzle's wrapper: its message ends in the query's parameters. */
function isQueryError(error: Error): boolean {
  return typeof (error as { query?: unknown }).query === 'string' && 'params' in error;
}

/**
 * A database error's message without the values in it: Postgres quotes the offending
 * input (`invalid input syntax for type uuid: "…"`), prints bytes (`0x00`), and drizzle
 * appends the parameters, which hold whatever a tenant submitted.
 */
export function redactDatabaseMessage(message: string): string {
  const withoutParams = message.replace(/\nparams: [\s\S]*$/, '');
  return withoutParams.replace(/"(?:[^"]|"")*"/g, '"[redacted]"').replace(/\b0x[0-9a-f]+\b/gi, '0x[redacted]');
}

function redactChain(error: Error, depth: number): Error {
  const cause = error.cause instanceof Error && depth < 8 ? redactChain(error.cause, depth + 1) : error.cause;
  const database = isPostgresError(error) || isQueryError(error);
  if (!database && cause === error.cause) return error;
  const copy = Object.create(Object.getPrototypeOf(error) as object) as Error & Record<string, unknown>;
  const message = database ? redactDatabaseMessage(error.message) : error.message;
  copy.name = error.name;
  copy.message = message;
  copy.stack = error.stack?.replace(error.message, message);
  if (database) {
    // Postgres' `detail`, `where`, `hint`, `internalQuery` and drizzle's `params` quote the input: left out.
    for (const field of DATABASE_ERROR_FIELDS) {
      const value = (error as unknown as Record<string, unknown>)[field];
      if (value !== undefined) copy[field] = value;
    }
  } else {
    Object.assign(copy, error);
  }
  if (cause !== undefined) copy.cause = cause;
  return copy;
}

/**
 * The logger's `err` serializer: pino's, except that database errors anywhere in the cause
 * chain lose the parts that carry request content (values in the message, `detail`,
 * `where`, parameters). Code, constraint, table and column stay for diagnosis.
 */
export function serializeError(value: unknown): unknown {
  // Some callers log an error already turned into text (`err: describeError(error)`): a drizzle query error's text ends in its parameters too.
  if (typeof value === 'string') return value.includes('Failed query: ') ? redactDatabaseMessage(value) : value;
  if (!(value instanceof Error)) return value;
  return pino.stdSerializers.err(redactChain(value, 0));
}
