import type { TraceCarrier } from '@switchyard/contracts';
import type { NewTaskRow } from '@switchyard/state';
import { stepsOf, type CompiledWorkflow, type PlannedSubtask } from '@switchyard/workflows';

/** The planner task the subtasks go under. */
export interface PlannerTask {
  taskId: string;
  jobId: string;
  tenantId: string;
  jobType: string;
  ordinal: number;
  traceContext: TraceCarrier | null;
}

/**
 * A validated plan as task rows: one per subtask, under the planner task (`parent_task_id`),
 * waiting for the planner and for the subtasks it `depends_on` (plan ids mapped to the new
 * task ids), its instruction and plan id in its input (the id is its key in `{{subtasks}}`
 * and `{{dependencies}}`), in the job's trace. Ordinals follow the planner, in plan order.
 */
export function materialisePlan(subtasks: readonly PlannedSubtask[], planner: PlannerTask, workflow: CompiledWorkflow, newId: () => string): NewTaskRow[] {
  const taskIdOf = new Map(subtasks.map((subtask) => [subtask.id, newId()]));
  return subtasks.map((subtask, index) => {
    const agent = workflow.agentsByRole.get(subtask.role);
    if (!agent?.planned) throw new Error(`workflow "${workflow.type}" has no planned role "${subtask.role}"`);
    const dependsOn = subtask.depends_on.map((id) => {
      const taskId = taskIdOf.get(id);
      if (!taskId) throw new Error(`subtask "${subtask.id}" depends on "${id}", which is not in the plan`);
      return taskId;
    });
    return {
      taskId: taskIdOf.get(subtask.id)!,
      jobId: planner.jobId,
      tenantId: planner.tenantId,
      jobType: planner.jobType,
      parentTaskId: planner.taskId,
      agentId: `${subtask.role}:${subtask.id}`.slice(0, 120),
      role: subtask.role,
      optional: agent.optional,
      dependsOn: [planner.taskId, ...dependsOn],
      ordinal: planner.ordinal + 1 + index,
      totalSteps: stepsOf(agent).length,
      inputSummary: { instruction: subtask.instruction, item_key: subtask.id },
      traceContext: planner.traceContext,
    };
  });
}
