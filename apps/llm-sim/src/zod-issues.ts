import type { z } from 'zod';

export interface IssueSummary {
  /** Dotted path of the offending field (`messages.0.role`), or null when the whole value is wrong. */
  param: string | null;
  message: string;
}

/** The first issue is enough for a 400: callers fix one field at a time, and the message stays short. */
export function firstIssue(error: z.ZodError): IssueSummary {
  const issue = error.issues[0];
  if (!issue) return { param: null, message: 'invalid value' };
  const param = issue.path.length > 0 ? issue.path.map((part) => String(part)).join('.') : null;
  const detail = issue.code === 'unrecognized_keys' ? `unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}` : issue.message;
  return { param, message: param ? `${param}: ${detail}` : detail };
}
