/** The response_format name of a Switchyard planner call (SPEC §6). */
export const PLAN_FORMAT_NAME = 'switchyard_plan';

interface PlanRoleSchema {
  properties?: { subtasks?: { items?: { properties?: { role?: { enum?: unknown[] } } } } };
}

/** `response_format` asks for a `switchyard_plan`: its allowed roles (possibly empty), else undefined. */
export function requestedPlanRoles(responseFormat: unknown): string[] | undefined {
  if (typeof responseFormat !== 'object' || responseFormat === null) return undefined;
  const format = responseFormat as { type?: unknown; json_schema?: { name?: unknown; schema?: unknown } };
  if (format.type !== 'json_schema' || format.json_schema?.name !== PLAN_FORMAT_NAME) return undefined;
  const roles = (format.json_schema.schema as PlanRoleSchema | undefined)?.properties?.subtasks?.items?.properties?.role?.enum ?? [];
  return roles.filter((role): role is string => typeof role === 'string');
}

export interface SimPlanSubtask {
  id: string;
  role: string;
  instruction: string;
  depends_on: string[];
}

/**
 * A coherent plan, as a planning model would give: three subtasks (gather, then analyse the
 * facts, then write from both) on the allowed roles in order, so a goal job has two levels
 * of dependencies. With one allowed role the three subtasks share it.
 */
export function planFor(roles: readonly string[], goalText: string): { subtasks: SimPlanSubtask[] } {
  const roleAt = (i: number) => roles[Math.min(i, roles.length - 1)] ?? 'worker';
  const topic = goalText.replace(/\s+/g, ' ').trim().slice(0, 80) || 'the goal';
  return {
    subtasks: [
      { id: 'gather', role: roleAt(0), instruction: `Gather the facts needed for: ${topic}`, depends_on: [] },
      { id: 'analyse', role: roleAt(1), instruction: `Analyse the gathered facts for: ${topic}`, depends_on: ['gather'] },
      { id: 'write', role: roleAt(2), instruction: `Write the answer to: ${topic}`, depends_on: ['gather', 'analyse'] },
    ],
  };
}

/** A plan that is JSON of the right shape but not valid: its two subtasks wait for each other. */
export function invalidPlanFor(roles: readonly string[]): { subtasks: SimPlanSubtask[] } {
  const role = roles[0] ?? 'worker';
  return {
    subtasks: [
      { id: 'a', role, instruction: 'Do a after b', depends_on: ['b'] },
      { id: 'b', role, instruction: 'Do b after a', depends_on: ['a'] },
    ],
  };
}

/**
 * How many of the next planner requests, across every target, get an invalid plan
 * (`PUT /plans {invalid_next}`): a drill for the planner's re-ask. Shared by all targets so
 * that the re-ask, which goes to another target, gets a good plan.
 */
export class PlanFaults {
  private invalidNext = 0;

  set(invalidNext: number): { invalid_next: number } {
    this.invalidNext = invalidNext;
    return this.snapshot();
  }

  /** Whether this planner request gets the invalid plan (and counts it down). */
  takeInvalid(): boolean {
    if (this.invalidNext === 0) return false;
    this.invalidNext -= 1;
    return true;
  }

  snapshot(): { invalid_next: number } {
    return { invalid_next: this.invalidNext };
  }
}
