import type { CompiledAgent, CompiledWorkflow } from './compiled-workflow';
import { isRecord, validateAgainstSchema, type SchemaCheck } from './json-schema';

/** Checks a job's input against its workflow's schema; every failing path is named (`input.documents.0.text`). */
export function validateInput(workflow: CompiledWorkflow, input: unknown): SchemaCheck<unknown> {
  return validateAgainstSchema(workflow.inputSchema, input, 'input');
}

/** The message for an unknown job type (400). */
export function unknownTypeMessage(type: string, known: Iterable<string>): string {
  return `unknown job type "${type}" (known: ${[...known].sort().join(', ')})`;
}

/** The items a for_each agent makes one task each for; `[]` when the input has no such array. */
export function itemsOf(agent: CompiledAgent, input: unknown): unknown[] {
  if (!agent.forEach) return [];
  let current: unknown = input;
  for (const segment of agent.forEach.path) current = isRecord(current) ? current[segment] : undefined;
  return Array.isArray(current) ? current : [];
}

/** The item's key (for_each `key.from`) as text, or undefined when the agent declares no key. */
export function itemKeyOf(agent: CompiledAgent, item: unknown): string | undefined {
  const key = agent.forEach?.key;
  if (!key || !isRecord(item) || item[key.from] === undefined) return undefined;
  const value = item[key.from];
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A for_each task's output with its item key copied in (`{..., document_id: "doc-1"}`). */
export function withItemKey(agent: CompiledAgent, output: unknown, item: unknown): unknown {
  const key = agent.forEach?.key;
  const value = itemKeyOf(agent, item);
  if (!key || value === undefined || !isRecord(output)) return output;
  return { ...output, [key.as]: value };
}
