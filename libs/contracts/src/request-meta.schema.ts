import { z } from 'zod';
import { SafeString } from './safe-string';

export const TASK_TYPES = ['extract', 'classify', 'summarize', 'code', 'reasoning', 'plan', 'chat'] as const;
export const COMPLEXITIES = ['low', 'medium', 'high'] as const;
export const SENSITIVITIES = ['public', 'internal', 'sensitive'] as const;
export const PRIORITIES = ['normal', 'high'] as const;

export const TaskTypeSchema = z.enum(TASK_TYPES);
export const ComplexitySchema = z.enum(COMPLEXITIES);
export const SensitivitySchema = z.enum(SENSITIVITIES);
export const PrioritySchema = z.enum(PRIORITIES);

const shortLabel = SafeString.min(1).max(64);

/**
 * What a model call needs, declared by the caller. Agents never name a model: the
 * router picks one from this (SPEC §1, seed 002 §3.3). `model_preference` is a hint.
 */
export const RequestMetaSchema = z.strictObject({
  task_type: TaskTypeSchema.default('chat'),
  complexity: ComplexitySchema.default('medium'),
  sensitivity: SensitivitySchema.default('internal'),
  priority: PrioritySchema.default('normal'),
  tags: z.array(shortLabel).max(32).default([]),
  business_type: shortLabel.optional(),
  model_preference: shortLabel.optional(),
  timeout_ms: z.number().int().min(100).max(600_000).optional(),
  estimated_input_tokens: z.number().int().min(0).optional(),
  max_output_tokens: z.number().int().min(1).optional(),
});
export type RequestMeta = z.infer<typeof RequestMetaSchema>;
export type RequestMetaInput = z.input<typeof RequestMetaSchema>;
export type TaskType = z.infer<typeof TaskTypeSchema>;
export type Complexity = z.infer<typeof ComplexitySchema>;
export type Sensitivity = z.infer<typeof SensitivitySchema>;
export type Priority = z.infer<typeof PrioritySchema>;
