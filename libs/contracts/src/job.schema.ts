import { z } from 'zod';
import { PrioritySchema, SensitivitySchema } from './request-meta.schema';
import { SafeString, truncateForEcho } from './safe-string';

export const MAX_DOCUMENTS_PER_JOB = 50;

export const JobMetaSchema = z.strictObject({
  sensitivity: SensitivitySchema.default('internal'),
  priority: PrioritySchema.default('normal'),
  business_type: SafeString.min(1).max(64).optional(),
  tags: z.array(SafeString.min(1).max(64)).max(32).default([]),
});
export type JobMeta = z.infer<typeof JobMetaSchema>;

export const DocumentSchema = z.strictObject({
  id: SafeString.min(1).max(200),
  text: SafeString.min(1).max(200_000),
});

export const DocReviewInputSchema = z
  .strictObject({
    question: SafeString.min(1).max(4_000),
    documents: z
      .array(DocumentSchema)
      .min(1, 'at least one document is required')
      .max(MAX_DOCUMENTS_PER_JOB, `at most ${MAX_DOCUMENTS_PER_JOB} documents per job`),
  })
  .superRefine((input, ctx) => {
    const seen = new Set<string>();
    input.documents.forEach((doc, index) => {
      if (seen.has(doc.id)) {
        ctx.addIssue({ code: 'custom', path: ['documents', index, 'id'], message: `duplicate document id "${truncateForEcho(doc.id)}"` });
      }
      seen.add(doc.id);
    });
  });
export type DocReviewInput = z.infer<typeof DocReviewInputSchema>;

/** Input schemas of the built-in job types, keyed by type. New types register here. */
export const JOB_INPUT_SCHEMAS = {
  doc_review: DocReviewInputSchema,
} as const;
export type JobType = keyof typeof JOB_INPUT_SCHEMAS;
export const JOB_TYPES = Object.keys(JOB_INPUT_SCHEMAS) as JobType[];

export function isJobType(value: unknown): value is JobType {
  return typeof value === 'string' && Object.hasOwn(JOB_INPUT_SCHEMAS, value);
}

/**
 * The submission envelope. The `input` is checked against its type's schema in a second
 * pass (see `parseJobSubmission`) so that errors name `input.<field>` precisely.
 */
export const JobSubmissionEnvelopeSchema = z.strictObject({
  type: SafeString.min(1).max(64),
  input: z.unknown(),
  meta: JobMetaSchema.default({ sensitivity: 'internal', priority: 'normal', tags: [] }),
  /** Where the finished job is POSTed (SPEC §6); the supervisor checks scheme and address. */
  callback_url: z.string().min(1).max(2048).optional(),
});

export type JobSubmission = { type: 'doc_review'; input: DocReviewInput; meta: JobMeta; callback_url?: string };
