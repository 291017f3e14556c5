import type { z } from 'zod';

export interface FieldIssue {
  path: string;
  message: string;
}

/** `documents.3.id` style paths, prefixed with where the value came from. */
export function formatIssuePath(path: readonly PropertyKey[], prefix?: string): string {
  const parts = path.map((part) => String(part));
  const joined = parts.join('.');
  if (!prefix) return joined || '(root)';
  return joined ? `${prefix}.${joined}` : prefix;
}

export function toFieldIssues(error: z.ZodError, prefix?: string): FieldIssue[] {
  return error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return {
        path: formatIssuePath(issue.path, prefix),
        message: `unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`,
      };
    }
    return { path: formatIssuePath(issue.path, prefix), message: issue.message };
  });
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
