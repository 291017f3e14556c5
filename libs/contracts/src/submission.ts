import {
  JOB_INPUT_SCHEMAS,
  JOB_TYPES,
  JobSubmissionEnvelopeSchema,
  isJobType,
  type JobSubmission,
} from './job.schema';
import { truncateForEcho } from './safe-string';
import { ValidationError, toFieldIssues } from './validation';

/** Parses a job submission body, or throws a ValidationError naming every bad field. */
export function parseJobSubmission(body: unknown): JobSubmission {
  const envelope = JobSubmissionEnvelopeSchema.safeParse(body);
  if (!envelope.success) throw new ValidationError(toFieldIssues(envelope.error));
  const { type, input, meta, callback_url } = envelope.data;
  if (!isJobType(type)) {
    throw new ValidationError([{ path: 'type', message: `unknown job type "${truncateForEcho(type)}"; known types: ${JOB_TYPES.join(', ')}` }]);
  }
  const parsedInput = JOB_INPUT_SCHEMAS[type].safeParse(input);
  if (!parsedInput.success) throw new ValidationError(toFieldIssues(parsedInput.error, 'input'));
  return { type, input: parsedInput.data, meta, ...(callback_url === undefined ? {} : { callback_url }) };
}
