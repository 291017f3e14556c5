import { StructuredSummarySchema } from '@switchyard/contracts';
import type { CompiledWorkflow, ResultReference } from './compiled-workflow';
import type { TaskOutcome } from './template';

/**
 * The job result from the tasks of each role, as `result:` declares it (pure).
 * - `result: ROLE`: that role's output (a for_each role: the outputs in item order).
 * - `result: {key: outputs.ROLE | summaries.ROLE}`: `outputs.ROLE` is the task's output;
 *   `summaries.ROLE` lists each successful task's summary with its item key (`key.as`) and
 *   `task_id`. Tasks of a `summaries.*` role without a usable summary are listed under
 *   `missing` (`{<key.as>, task_id, status}`), which appears only when not empty.
 */
export function buildJobResult(workflow: CompiledWorkflow, tasksByRole: Readonly<Record<string, readonly TaskOutcome[]>>): unknown {
  const spec = workflow.result;
  if (spec.kind === 'role') {
    const tasks = tasksByRole[spec.role] ?? [];
    return workflow.agentsByRole.get(spec.role)?.forEach ? tasks.map((task) => task.output ?? null) : (tasks[0]?.output ?? null);
  }
  const result: Record<string, unknown> = {};
  const missing: Array<Record<string, string>> = [];
  for (const { key, reference } of spec.entries) {
    const tasks = tasksByRole[reference.role] ?? [];
    if (reference.kind === 'outputs') {
      result[key] = tasks[0]?.output ?? null;
      continue;
    }
    const summaries = collectSummaries(workflow, reference, tasks);
    result[key] = summaries.found;
    missing.push(...summaries.missing);
  }
  if (missing.length > 0) result.missing = missing;
  return result;
}

function collectSummaries(workflow: CompiledWorkflow, reference: ResultReference, tasks: readonly TaskOutcome[]) {
  const keyField = workflow.agentsByRole.get(reference.role)?.forEach?.key?.as;
  const found: Array<Record<string, unknown>> = [];
  const missing: Array<Record<string, string>> = [];
  for (const task of tasks) {
    const label = keyField && task.key !== undefined ? { [keyField]: task.key } : {};
    const summary = StructuredSummarySchema.safeParse(task.output);
    if (task.status === 'success' && summary.success) found.push({ ...summary.data, ...label, task_id: task.taskId });
    else missing.push({ ...label, task_id: task.taskId, status: task.status });
  }
  return { found, missing };
}
