import { StructuredSummarySchema, type StructuredSummary } from '@switchyard/contracts';
import type { CallStep, CompiledAgent } from './compiled-workflow';
import { toStrictSchema, validateAgainstSchema, type JsonSchema, type SchemaCheck } from './json-schema';
import { planInstructions, planResponseFormat } from './plan';
import { renderTemplate, type RenderContext } from './template';
import { DEFAULT_CLOUD_TASK_TIMEOUT_MS, DEFAULT_LOCAL_TASK_TIMEOUT_MS } from './workflow-definition';

/** The default output of every call: the structured summary (seed 002 §3.2). */
export const SUMMARY_INSTRUCTIONS =
  'Answer with one JSON object and nothing else: {"conclusion": string, "evidence": string[], "confidence": number between 0 and 1}.';

/** Field names of the default output, for checking `{{outputs.ROLE.x}}` at load time. */
export const SUMMARY_OUTPUT_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['conclusion', 'evidence', 'confidence'],
  properties: { conclusion: { type: 'string' }, evidence: { type: 'array', items: { type: 'string' } }, confidence: { type: 'number', minimum: 0, maximum: 1 } },
};

export interface JsonSchemaResponseFormat {
  type: 'json_schema';
  json_schema: { name: string; strict: true; schema: JsonSchema };
}

function callStepOf(target: CallStep | CompiledAgent): CallStep {
  return 'kind' in target ? target : (target.steps.at(-1) as CallStep);
}

/**
 * The `response_format` of a call: the declared output schema (strict), or the plan for a
 * planner. `null` for the default summary: the runtime asks for a JSON object and reads it
 * as the summary, as the built-in agents always did.
 */
export function responseFormat(target: CallStep | CompiledAgent): JsonSchemaResponseFormat | null {
  const step = callStepOf(target);
  if (step.plan) return planResponseFormat(step.plan);
  if (!step.output) return null;
  return { type: 'json_schema', json_schema: { name: step.outputName, strict: true, schema: toStrictSchema(step.output) } };
}

/** The sentence that tells the model the shape of its answer; appended to the system prompt. */
export function outputInstructions(target: CallStep | CompiledAgent): string {
  const step = callStepOf(target);
  if (step.plan) return planInstructions(step.plan);
  if (step.output) return `Answer with one JSON object and nothing else, matching this JSON Schema: ${JSON.stringify(toStrictSchema(step.output))}`;
  return SUMMARY_INSTRUCTIONS;
}

/** Checks a reply against a declared output schema; a failure is a bad output of that target. */
export function validateOutput(schema: JsonSchema, value: unknown): SchemaCheck<unknown> {
  return validateAgainstSchema(schema, value);
}

/** Checks a reply against the default output (the model must give a confidence). */
export function validateSummary(value: unknown): SchemaCheck<StructuredSummary> {
  const parsed = StructuredSummarySchema.safeParse(value);
  if (parsed.success && parsed.data.confidence !== null) return { ok: true, value: parsed.data };
  return { ok: false, issues: [{ path: '(root)', message: 'not a structured summary {conclusion, evidence, confidence}' }] };
}

export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

/** A call step's messages for one task: its prompts rendered, the output instructions after the system prompt. */
export function renderMessages(step: CallStep, context: RenderContext): { messages: ChatMessage[]; warnings: string[] } {
  const system = step.system ? renderTemplate(step.system, context) : { text: '', warnings: [] };
  const user = renderTemplate(step.user, context);
  const instructions = outputInstructions(step);
  return {
    messages: [
      { role: 'system', content: system.text ? `${system.text} ${instructions}` : instructions },
      { role: 'user', content: user.text },
    ],
    warnings: [...system.warnings, ...user.warnings],
  };
}

/** A task's total time: the agent's `timeout_ms`, else 90 s when every call goes to local targets, 180 s otherwise. */
export function taskTimeoutMs(agent: CompiledAgent, allCallsLocal: boolean): number {
  return agent.timeoutMs ?? (allCallsLocal ? DEFAULT_LOCAL_TASK_TIMEOUT_MS : DEFAULT_CLOUD_TASK_TIMEOUT_MS);
}

/** The steps the runtime runs for a task of this agent: a gather checkpoint, then the call step(s). */
export function stepsOf(agent: CompiledAgent): CompiledAgent['steps'] {
  return agent.steps;
}
