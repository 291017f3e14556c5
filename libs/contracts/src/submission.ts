import { JobSubmissionEnvelopeSchema, type JobSubmission } from './job.schema';
import { findUnsafeJson } from './safe-string';
import { ValidationError, toFieldIssues, type FieldIssue } from './validation';

/** How a job type checks its input: the input it accepts, or every failing path (`input.documents.0.text`). */
export type JobInputCheck = (input: unknown) => { ok: true; value: unknown } | { ok: false; issues: FieldIssue[] };

/**
 * Parses a job submission body, or throws a ValidationError naming every bad field. `inputCheckOf`
 * gives the type's input check, or a message for a type that cannot be submitted (unknown).
 */
export function parseJobSubmission(body: unknown, inputCheckOf: (type: string) => JobInputCheck | string): JobSubmission {
  const envelope = JobSubmissionEnvelopeSchema.safeParse(body);
  if (!envelope.success) throw new ValidationError(toFieldIssues(envelope.error));
  const { type, input, meta, callback_url } = envelope.data;
  const check = inputCheckOf(type);
  if (typeof check === 'string') throw new ValidationError([{ path: 'type', message: check }]);
  // Whatever the workflow's schema says: no string Postgres cannot store (NUL, a lone surrogate).
  const unsafe = findUnsafeJson(input);
  if (unsafe) throw new ValidationError([{ path: unsafe.path === '(body)' ? 'input' : `input.${unsafe.path}`, message: unsafe.message }]);
  const parsed = check(input);
  if (!parsed.ok) throw new ValidationError(parsed.issues);
  return { type, input: parsed.value, meta, ...(callback_url === undefined ? {} : { callback_url }) };
}
