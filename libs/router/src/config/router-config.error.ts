import type { FieldIssue } from '@switchyard/contracts';
import { redactUrl } from './redact-url';

/** A router config that cannot be used. The message lists every problem with its path; credentials in a quoted URL are redacted. */
export class RouterConfigError extends Error {
  constructor(
    readonly source: string,
    readonly issues: readonly FieldIssue[],
    options?: { cause?: unknown },
  ) {
    super(redactUrl(`invalid router config ${source}:\n${issues.map((issue) => `  ${issue.path}: ${issue.message}`).join('\n')}`), options);
    this.name = 'RouterConfigError';
  }
}
