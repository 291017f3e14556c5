import type { RequestMeta } from '@switchyard/contracts';
import type { RuleCondition } from '../config/router-config.schema';

/** A `when` block turned into lookups; `undefined` means "no condition on this key". */
export interface CompiledCondition {
  readonly catchAll: boolean;
  readonly taskType: ReadonlySet<string> | undefined;
  readonly complexity: ReadonlySet<string> | undefined;
  readonly sensitivity: ReadonlySet<string> | undefined;
  readonly priority: ReadonlySet<string> | undefined;
  readonly businessType: ReadonlySet<string> | undefined;
  readonly tags: readonly string[] | undefined;
}

export function compileCondition(when: RuleCondition): CompiledCondition {
  const toSet = (values: readonly string[] | undefined) => (values === undefined ? undefined : new Set(values));
  return {
    catchAll: when.all_else === true,
    taskType: toSet(when.task_type),
    complexity: toSet(when.complexity),
    sensitivity: toSet(when.sensitivity),
    priority: toSet(when.priority),
    businessType: toSet(when.business_type),
    tags: when.tags === undefined ? undefined : [...when.tags],
  };
}

/** Every named key must match (AND); a list value matches any of its entries; tags must all be present. */
export function conditionMatches(condition: CompiledCondition, meta: RequestMeta): boolean {
  if (condition.catchAll) return true;
  if (condition.taskType !== undefined && !condition.taskType.has(meta.task_type)) return false;
  if (condition.complexity !== undefined && !condition.complexity.has(meta.complexity)) return false;
  if (condition.sensitivity !== undefined && !condition.sensitivity.has(meta.sensitivity)) return false;
  if (condition.priority !== undefined && !condition.priority.has(meta.priority)) return false;
  if (condition.businessType !== undefined && (meta.business_type === undefined || !condition.businessType.has(meta.business_type))) {
    return false;
  }
  if (condition.tags !== undefined) {
    for (const tag of condition.tags) if (!meta.tags.includes(tag)) return false;
  }
  return true;
}
