/** How long a client is asked to wait before retrying while Postgres is unreachable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Socket errors of a connection that could not be made or was lost. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND']);
/** SQLSTATEs of a server going away: admin_shutdown, crash_shutdown, cannot_connect_now. */
const SHUTDOWN_SQLSTATES = new Set(['57P01', '57P02', '57P03']);
/** What pg says, without a code, when a connection is lost or the pool cannot get one in time. */
const LOST_CONNECTION = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection terminated due to connection timeout)/;

interface ErrorShape {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/**
 * Whether an error means Postgres cannot be reached now (not that a query was wrong): refused,
 * reset or lost connections, SQLSTATE class 08 (connection exception), 57P01–57P03 (the server
 * shutting down or starting), and the pool's connect timeout. Looks through `cause` (drizzle
 * wraps driver errors) and AggregateError's `errors` (one per address of a dual-stack host).
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const { code, message, cause, errors } = error as ErrorShape;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SHUTDOWN_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  if (typeof message === 'string' && LOST_CONNECTION.test(message)) return true;
  if (Array.isArray(errors) && errors.length > 0 && errors.every((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return isDatabaseUnavailable(cause, depth + 1);
}
