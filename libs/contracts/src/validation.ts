import type { z } from 'zod';
import { truncateForEcho } from './safe-string';

export interface FieldIssue {
  path: string;
  message: string;
}

/** `documents.3.id` style paths, prefixed with where the value came from. */
export function formatIssuePath(path: readonly PropertyKey[], prefix?: string): string {
  const parts = path.map((part) => truncateForEcho(String(part), 32));
  const joined = parts.join('.');
  if (!prefix) return joined || '(root)';
  return joined ? `${prefix}.${joined}` : prefix;
}

export function toFieldIssues(error: z.ZodError, prefix?: string): FieldIssue[] {
  return error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return {
        path: formatIssuePath(issue.path, prefix),
        message: `unknown field${issue.keys.length > 1 ? 's' : ''}: ${unknownKeyList(issue.keys)}`,
      };
    }
    return { path: formatIssuePath(issue.path, prefix), message: issue.message };
  });
}

/** The caller's unknown keys, each cut short and at most a few of them: an error never repeats a large input. */
function unknownKeyList(keys: readonly string[]): string {
  const shown = keys.slice(0, 5).map((key) => truncateForEcho(key, 32));
  return keys.length > shown.length ? `${shown.join(', ')} and ${keys.length - shown.length} more` : shown.join(', ');
}

export class ValidationError extends Error {
  constructor(
    readonly issues: FieldIssue[],
    message = issues.map((i) => `${i.path}: ${i.message}`).join('; '),
  ) {
    super(message);
    this.name = 'ValidationError';
  }
}
