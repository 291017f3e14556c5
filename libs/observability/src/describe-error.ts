import { types } from 'node:util';

interface ErrorLike {
  name: string;
  message: string;
  code?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** `instanceof Error` misses errors made in another realm (a VM context, a test sandbox). */
function isErrorLike(value: unknown): value is ErrorLike {
  return value instanceof Error || types.isNativeError(value);
}

/**
 * An error as one line, for a log field or a message. Node reports a failed connect to a name
 * with several addresses (`localhost` → ::1 and 127.0.0.1) as an AggregateError whose own
 * message is empty: the addresses it tried are only in `errors`, so they are named here one
 * by one. A `cause` is appended in parentheses unless the message already says it.
 */
export function describeError(error: unknown): string {
  if (!isErrorLike(error)) return String(error);
  let text = error.message;
  if (Array.isArray(error.errors) && error.errors.length > 0) {
    const parts = error.errors.map(describeError).join('; ');
    text = text ? `${text}: ${parts}` : parts;
  }
  if (!text) text = error.code === undefined ? error.name : `${error.name} ${String(error.code)}`;
  if (error.cause !== undefined) {
    const cause = describeError(error.cause);
    // A wrapper that already quotes its cause's description is not told twice.
    if (!text.includes(cause)) text += ` (${cause})`;
  }
  return text;
}
