import { z } from 'zod';

/** What a model must answer with: the structured summary a sub-agent hands upward (seed 002 §3.2). */
export const ModelSummarySchema = z.object({
  conclusion: z.string().min(1),
  evidence: z.array(z.string()),
  confidence: z.number().min(0).max(1),
});
export type ModelSummary = z.infer<typeof ModelSummarySchema>;

/**
 * The stored form. `confidence` is null when the model never produced a valid summary
 * and its raw text was kept as the conclusion (SPEC §4, "Model output").
 */
export const StructuredSummarySchema = z.object({
  conclusion: z.string(),
  evidence: z.array(z.string()),
  confidence: z.number().min(0).max(1).nullable(),
});
export type StructuredSummary = z.infer<typeof StructuredSummarySchema>;
