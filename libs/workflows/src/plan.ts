import type { CompiledPlanSettings, CompiledWorkflow } from './compiled-workflow';
import { findCycle, topologicalLevels } from './dag';
import { isRecord, type JsonSchema } from './json-schema';

/** The response_format name SPEC §6 fixes for a planner's reply. */
export const PLAN_FORMAT_NAME = 'switchyard_plan';

export interface PlannedSubtask {
  id: string;
  role: string;
  instruction: string;
  depends_on: string[];
}

export interface ValidPlan {
  subtasks: PlannedSubtask[];
  /** Subtask ids in dependency order (level by level, plan order within a level). */
  order: string[];
  levels: string[][];
}

export type PlanCheck = { ok: true; plan: ValidPlan } | { ok: false; reasons: string[] };

function settingsOf(goal: CompiledWorkflow | CompiledPlanSettings): CompiledPlanSettings {
  if ('maxSubtasks' in goal) return goal;
  if (!goal.planner?.plan) throw new Error(`workflow "${goal.type}" has no planner agent (an agent with plan:)`);
  return goal.planner.plan;
}

/** The strict JSON Schema of a plan whose roles are the ones the goal workflow allows. */
export function planSchema(goal: CompiledWorkflow | CompiledPlanSettings): JsonSchema {
  const { roles } = settingsOf(goal);
  return {
    type: 'object',
    additionalProperties: false,
    required: ['subtasks'],
    properties: {
      subtasks: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'role', 'instruction', 'depends_on'],
          properties: {
            id: { type: 'string' },
            role: { type: 'string', enum: [...roles] },
            instruction: { type: 'string' },
            depends_on: { type: 'array', items: { type: 'string' } },
          },
        },
      },
    },
  };
}

/** `response_format` for the planner's call (SPEC §6). */
export function planResponseFormat(goal: CompiledWorkflow | CompiledPlanSettings) {
  return { type: 'json_schema' as const, json_schema: { name: PLAN_FORMAT_NAME, strict: true as const, schema: planSchema(goal) } };
}

/** What the planner is told about the shape of its answer (appended to its system prompt). */
export function planInstructions(goal: CompiledWorkflow | CompiledPlanSettings): string {
  const { roles, maxSubtasks } = settingsOf(goal);
  return (
    `Answer with one JSON object and nothing else: {"subtasks": [{"id": string, "role": one of ${roles.map((r) => `"${r}"`).join(', ')}, ` +
    `"instruction": string, "depends_on": [ids of other subtasks]}]}, with 1 to ${maxSubtasks} subtasks and no dependency cycle.`
  );
}

/**
 * Checks a planner's reply (the parsed object, or the raw text) against the goal workflow:
 * the shape, a non-empty list of at most `max_subtasks`, unique ids, allowed roles,
 * `depends_on` naming listed ids (not itself), and no cycle. Every reason is reported.
 */
export function validatePlan(raw: unknown, goal: CompiledWorkflow | CompiledPlanSettings): PlanCheck {
  const settings = settingsOf(goal);
  const value = typeof raw === 'string' ? parseJsonObject(raw) : raw;
  if (!isRecord(value)) return { ok: false, reasons: ['the reply is not a JSON object'] };
  if (!Array.isArray(value.subtasks)) return { ok: false, reasons: ['subtasks: expected an array'] };

  const reasons: string[] = [];
  if (value.subtasks.length === 0) reasons.push('subtasks: the plan has no subtasks');
  if (value.subtasks.length > settings.maxSubtasks) reasons.push(`subtasks: ${value.subtasks.length} subtasks, at most ${settings.maxSubtasks} allowed`);

  const subtasks: PlannedSubtask[] = [];
  value.subtasks.forEach((entry: unknown, index: number) => {
    const at = `subtasks[${index}]`;
    if (!isRecord(entry)) return void reasons.push(`${at}: expected an object`);
    const extra = Object.keys(entry).filter((k) => !['id', 'role', 'instruction', 'depends_on'].includes(k));
    if (extra.length) reasons.push(`${at}: unknown field${extra.length > 1 ? 's' : ''}: ${extra.join(', ')}`);
    const { id, role, instruction, depends_on: dependsOn } = entry;
    const problems: string[] = [];
    if (typeof id !== 'string' || id.trim() === '') problems.push(`${at}.id: expected a non-empty string`);
    if (typeof role !== 'string') problems.push(`${at}.role: expected a string`);
    else if (!settings.roles.includes(role)) problems.push(`${at}.role: unknown role "${role}" (allowed: ${settings.roles.join(', ')})`);
    if (typeof instruction !== 'string' || instruction.trim() === '') problems.push(`${at}.instruction: expected a non-empty string`);
    if (!Array.isArray(dependsOn) || !dependsOn.every((d) => typeof d === 'string')) problems.push(`${at}.depends_on: expected an array of subtask ids`);
    reasons.push(...problems);
    if (problems.length === 0) subtasks.push({ id: id as string, role: role as string, instruction: instruction as string, depends_on: dependsOn as string[] });
  });

  const ids = new Set<string>();
  subtasks.forEach((subtask) => {
    if (ids.has(subtask.id)) reasons.push(`subtask id "${subtask.id}" is used more than once`);
    ids.add(subtask.id);
  });
  for (const subtask of subtasks) {
    for (const dep of subtask.depends_on) {
      if (dep === subtask.id) reasons.push(`subtask "${subtask.id}" depends on itself`);
      else if (!ids.has(dep)) reasons.push(`subtask "${subtask.id}" depends on "${dep}", which is not in the plan`);
    }
  }
  const nodes = subtasks.map((s) => ({ id: s.id, dependsOn: s.depends_on.filter((d) => d !== s.id) }));
  const cycle = findCycle(nodes);
  if (cycle) reasons.push(`dependency cycle: ${cycle.join(' → ')}`);
  if (reasons.length > 0) return { ok: false, reasons };

  const levels = topologicalLevels(nodes);
  return { ok: true, plan: { subtasks, order: levels.flat(), levels } };
}

/** Models often wrap JSON in a Markdown fence or a sentence; the first JSON object counts. */
function parseJsonObject(text: string): unknown {
  const candidates = [text.trim()];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fenced?.[1]) candidates.push(fenced[1].trim());
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start >= 0 && end > start) candidates.push(text.slice(start, end + 1));
  for (const candidate of candidates) {
    try {
      return JSON.parse(candidate);
    } catch {
      // not JSON: try the next reading
    }
  }
  return undefined;
}
