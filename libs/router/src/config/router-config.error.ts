import type { FieldIssue } from '@switchyard/contracts';

/** A router config that cannot be used. The message lists every problem with its path. */
export class RouterConfigError extends Error {
  constructor(
    readonly source: string,
    readonly issues: readonly FieldIssue[],
    options?: { cause?: unknown },
  ) {
    super(`invalid router config ${source}:\n${issues.map((issue) => `  ${issue.path}: ${issue.message}`).join('\n')}`, options);
    this.name = 'RouterConfigError';
  }
}
