import { z } from 'zod';
import type { FieldIssue } from './validation';

/** How deeply objects and arrays may nest in any accepted JSON body. */
export const MAX_JSON_DEPTH = 64;

/** The longest fragment of a caller's input that an error message repeats. */
export const MAX_ECHO_CHARS = 64;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const UNSAFE_STRING_MESSAGE = 'must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate';

/**
 * Why a string cannot be stored, or undefined when it can. Postgres text and jsonb refuse
 * U+0000 and unpaired surrogates; one such value once failed a whole ledger batch, so no
 * string with them gets past the API.
 */
export function unsafeStringReason(value: string): string | undefined {
  if (value.includes('\u0000') || LONE_SURROGATE.test(value)) return UNSAFE_STRING_MESSAGE;
  return undefined;
}

/** Every string the API accepts: chain `.min()`, `.max()` and the like as on `z.string()`. */
export const SafeString = z.string().refine((value) => unsafeStringReason(value) === undefined, { message: UNSAFE_STRING_MESSAGE });

/** At most `max` characters of caller input, marked when cut, for error messages. */
export function truncateForEcho(value: string, max: number = MAX_ECHO_CHARS): string {
  if (value.length <= max) return value;
  let cut = value.slice(0, max);
  // Never leave half of a surrogate pair behind.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}… (${value.length} characters)`;
}

/** Keys that could reach an object's prototype if the body were ever merged into another object (as secure-json-parse sees them). */
function isPrototypeKey(key: string, parentKey: string | undefined): boolean {
  return key === '__proto__' || (key === 'prototype' && parentKey === 'constructor');
}

/**
 * The first thing in a parsed JSON body that no route accepts: nesting deeper than
 * `maxDepth`, a string or key with NUL or an unpaired surrogate, or a prototype key. Pure;
 * the recursion stops at `maxDepth`, so a hostile body cannot overflow the stack here.
 */
export function findUnsafeJson(body: unknown, maxDepth: number = MAX_JSON_DEPTH): FieldIssue | undefined {
  return inspect(body, [], 0, maxDepth);
}

function inspect(value: unknown, path: string[], depth: number, maxDepth: number): FieldIssue | undefined {
  if (typeof value === 'string') {
    const reason = unsafeStringReason(value);
    return reason ? { path: echoPath(path), message: reason } : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth >= maxDepth) return { path: echoPath(path), message: `nests deeper than ${maxDepth} levels` };
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      const issue = inspect(value[index], [...path, String(index)], depth + 1, maxDepth);
      if (issue) return issue;
    }
    return undefined;
  }
  for (const [key, child] of Object.entries(value)) {
    const keyReason = unsafeStringReason(key);
    if (keyReason) return { path: echoPath(path), message: `a key ${keyReason}` };
    if (isPrototypeKey(key, path[path.length - 1])) return { path: echoPath([...path, key]), message: `the key "${key}" is not allowed` };
    const issue = inspect(child, [...path, key], depth + 1, maxDepth);
    if (issue) return issue;
  }
  return undefined;
}

/** A path short enough to repeat: each key cut, and the middle of a very deep path elided. */
function echoPath(path: string[]): string {
  const parts = path.map((part) => truncateForEcho(part, 32));
  const shown = parts.length > 12 ? [...parts.slice(0, 6), `…(${parts.length - 10} more)…`, ...parts.slice(-4)] : parts;
  return shown.join('.') || '(body)';
}
