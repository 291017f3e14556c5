import { z } from 'zod';
import { ComplexitySchema, PrioritySchema, TaskTypeSchema } from '@switchyard/contracts';

/**
 * The workflow file format (SPEC §6) as a zod schema. A YAML file parses into this shape;
 * a workflow declared in TypeScript is a `WorkflowDefinition` value. Cross-field rules
 * (known roles, cycles, template variables) are checked by `compileWorkflow`.
 */

const NAME = /^[a-z][a-z0-9_]{0,47}$/;
const name = (what: string) => z.string().regex(NAME, `${what} must be lower-case letters, digits and _, starting with a letter (at most 48)`);
const jsonSchema = z.record(z.string(), z.unknown());

/** Request meta an agent may declare. `sensitivity` is the job's, never the workflow's. */
export const AgentMetaSchema = z.strictObject({
  task_type: TaskTypeSchema.optional(),
  complexity: ComplexitySchema.optional(),
  priority: PrioritySchema.optional(),
  tags: z.array(z.string().min(1).max(64)).max(32).optional(),
  business_type: z.string().min(1).max(64).optional(),
  max_output_tokens: z.number().int().min(1).max(200_000).optional(),
  timeout_ms: z.number().int().min(100).max(600_000).optional(),
  sensitivity: z.never({ error: 'sensitivity comes from the job (its meta.sensitivity), a workflow cannot set it' }).optional(),
});

export const PromptSchema = z.strictObject({
  system: z.string().min(1).optional(),
  user: z.string().min(1),
});

export const StepDefinitionSchema = z.strictObject({
  name: name('a step name'),
  prompt: PromptSchema,
  meta: AgentMetaSchema.optional(),
  output: jsonSchema.optional(),
});

export const ItemKeySchema = z.strictObject({
  /** The item field whose value names the task (`id`). */
  from: z.string().min(1),
  /** Copied into the task's output under this name (`document_id`); default: `from`. */
  as: name('key.as').optional(),
  /** How `{{summaries.ROLE}}` labels the task (`Document "doc-1"`); default: the role. */
  label: z.string().min(1).max(64).optional(),
});

export const PlanSettingsSchema = z.strictObject({
  max_subtasks: z.number().int().min(1).max(20).optional(),
  roles: z.array(name('a planned role')).min(1),
});

export const AgentDefinitionSchema = z.strictObject({
  role: name('role'),
  description: z.string().optional(),
  meta: AgentMetaSchema.optional(),
  prompt: PromptSchema.optional(),
  steps: z.array(StepDefinitionSchema).min(1).optional(),
  for_each: z.string().min(1).optional(),
  key: ItemKeySchema.optional(),
  after: z.array(z.string()).optional(),
  optional: z.boolean().optional(),
  output: jsonSchema.optional(),
  timeout_ms: z.number().int().min(1_000).max(3_600_000).optional(),
  gather_step: name('gather_step').optional(),
  plan: PlanSettingsSchema.optional(),
  planned: z.boolean().optional(),
});

export const WorkflowDefinitionSchema = z.strictObject({
  type: name('type'),
  description: z.string().optional(),
  input: jsonSchema,
  agents: z.array(AgentDefinitionSchema).min(1),
  result: z.union([z.string().min(1), z.record(z.string().min(1), z.string().min(1))]).optional(),
});

export type AgentMeta = z.input<typeof AgentMetaSchema>;
export type PromptDefinition = z.input<typeof PromptSchema>;
export type StepDefinition = z.input<typeof StepDefinitionSchema>;
export type ItemKey = z.input<typeof ItemKeySchema>;
export type PlanSettings = z.input<typeof PlanSettingsSchema>;
export type AgentDefinition = z.input<typeof AgentDefinitionSchema>;
/** What a workflow file holds; export one of these to declare a workflow in TypeScript. */
export type WorkflowDefinition = z.input<typeof WorkflowDefinitionSchema>;

/** A task's total time when the runtime does not find a `timeout_ms` on the agent (SPEC §6). */
export const DEFAULT_LOCAL_TASK_TIMEOUT_MS = 90_000;
export const DEFAULT_CLOUD_TASK_TIMEOUT_MS = 180_000;
export const DEFAULT_MAX_SUBTASKS = 5;
/** The step that collects a task's inputs and renders its prompts, checkpointed before any call. */
export const DEFAULT_GATHER_STEP = 'gather';
/** Role names the runtime uses for its own rows. */
export const RESERVED_ROLES = ['job', 'supervisor'] as const;
