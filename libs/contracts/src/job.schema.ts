import { z } from 'zod';
import { PrioritySchema, SensitivitySchema } from './request-meta.schema';
import { SafeString } from './safe-string';

export const JobMetaSchema = z.strictObject({
  sensitivity: SensitivitySchema.default('internal'),
  priority: PrioritySchema.default('normal'),
  business_type: SafeString.min(1).max(64).optional(),
  tags: z.array(SafeString.min(1).max(64)).max(32).default([]),
});
export type JobMeta = z.infer<typeof JobMetaSchema>;

/**
 * The submission envelope. The job types and their inputs are data (workflow files): the
 * `input` is checked against its workflow's schema in a second pass, so that errors name
 * `input.<field>` precisely.
 */
export const JobSubmissionEnvelopeSchema = z.strictObject({
  type: SafeString.min(1).max(64),
  input: z.unknown(),
  meta: JobMetaSchema.default({ sensitivity: 'internal', priority: 'normal', tags: [] }),
  /** Where the finished job is POSTed (SPEC §6); the supervisor checks scheme and address. */
  callback_url: z.string().min(1).max(2048).optional(),
});

/** A submission whose input passed its workflow's schema. */
export interface JobSubmission {
  type: string;
  input: unknown;
  meta: JobMeta;
  callback_url?: string;
}
