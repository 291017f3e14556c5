import { z } from 'zod';
import { ComplexitySchema, TaskTypeSchema } from '@switchyard/contracts';

/** One labelled request: what a caller would have declared for it. */
export const MetaExampleSchema = z.strictObject({
  text: z.string().trim().min(1).max(4_000),
  task_type: TaskTypeSchema,
  complexity: ComplexitySchema,
});

const InferredFieldsSchema = z
  .strictObject({ task_type: TaskTypeSchema.optional(), complexity: ComplexitySchema.optional() })
  .refine((set) => set.task_type !== undefined || set.complexity !== undefined, { message: 'sets nothing; name `task_type` and/or `complexity`' });

/** A rule fires on the last user message: its `pattern` (case-insensitive) matches and/or it is at least `min_chars` long. */
const MetaRuleSchema = z
  .strictObject({
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, "_", "." and "-", at most 64 characters'),
    pattern: z.string().min(1).max(1_000).optional(),
    min_chars: z.number().int().min(1).optional(),
    set: InferredFieldsSchema,
  })
  .superRefine((rule, ctx) => {
    if (rule.pattern === undefined && rule.min_chars === undefined) {
      ctx.addIssue({ code: 'custom', message: 'needs `pattern` and/or `min_chars`' });
    }
    if (rule.pattern !== undefined) {
      try {
        new RegExp(rule.pattern, 'iu');
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['pattern'], message: `not a valid regular expression: ${error instanceof Error ? error.message : String(error)}` });
      }
    }
  });

/** The file `router.inferred_meta.examples` names: rules first, then the labelled examples. */
export const MetaExamplesFileSchema = z.strictObject({
  rules: z.array(MetaRuleSchema).default([]),
  examples: z.array(MetaExampleSchema).min(1, 'at least one labelled example is required'),
});

export type MetaExample = z.output<typeof MetaExampleSchema>;
export type MetaRule = z.output<typeof MetaRuleSchema>;
export type MetaExamplesFile = z.output<typeof MetaExamplesFileSchema>;
