import { parseJobSubmission, type JobSubmission } from '@switchyard/contracts';
import type { NewTaskRow } from '@switchyard/state';
import { itemKeyOf, itemsOf, stepsOf, unknownTypeMessage, validateInput, type CompiledWorkflow } from '@switchyard/workflows';
import { workflowHash } from '../workflows/workflow-versions';
import type { JobPlan, PlanContext } from './job-plan';

/**
 * Parses a submission against the workflows: an unknown type names the known ones, and the
 * input is checked with its workflow's schema (every failing path named). Throws ValidationError.
 */
export function parseWorkflowSubmission(body: unknown, workflows: ReadonlyMap<string, CompiledWorkflow>): { workflow: CompiledWorkflow; submission: JobSubmission } {
  let workflow: CompiledWorkflow | undefined;
  const submission = parseJobSubmission(body, (type) => {
    workflow = workflows.get(type);
    if (!workflow) return unknownTypeMessage(type, workflows.keys());
    const found = workflow;
    return (input) => validateInput(found, input);
  });
  return { workflow: workflow!, submission };
}

/**
 * One planner for every workflow: the job's root row (which keeps the workflow definition the
 * job runs with, and its hash), then one task per agent — one per item for a `for_each` agent —
 * in dependency order, each with the task ids it waits for (`depends_on`, from `after`). A goal
 * workflow's planned roles get no task here: the planner's plan adds them when it completes.
 */
export function planWorkflowJob(workflow: CompiledWorkflow, submission: JobSubmission, ctx: PlanContext): JobPlan {
  const jobId = ctx.newId();
  const common = { jobId, tenantId: ctx.tenantId, jobType: workflow.type, parentTaskId: jobId, traceContext: ctx.trace } as const;
  const idsByRole = new Map<string, string[]>();
  const tasks: NewTaskRow[] = [];
  for (const role of workflow.levels.flat()) {
    const agent = workflow.agentsByRole.get(role)!;
    const dependsOn = agent.after.flatMap((upstream) => idsByRole.get(upstream) ?? []);
    const base = { ...common, role, optional: agent.optional, dependsOn, totalSteps: stepsOf(agent).length };
    const ids: string[] = [];
    if (agent.forEach) {
      itemsOf(agent, submission.input).forEach((item, index) => {
        const key = itemKeyOf(agent, item);
        const taskId = ctx.newId();
        ids.push(taskId);
        tasks.push({ ...base, taskId, agentId: `${role}-${index + 1}`, ordinal: tasks.length, inputSummary: { item, item_index: index, ...(key === undefined ? {} : { item_key: key }) } });
      });
    } else {
      const taskId = ctx.newId();
      ids.push(taskId);
      tasks.push({ ...base, taskId, agentId: role, ordinal: tasks.length, inputSummary: {} });
    }
    idsByRole.set(role, ids);
  }

  const definition = workflow.definition as unknown as Record<string, unknown>;
  const root: NewTaskRow = {
    taskId: jobId,
    jobId,
    tenantId: ctx.tenantId,
    jobType: workflow.type,
    parentTaskId: null,
    agentId: 'supervisor',
    role: 'job',
    inputSummary: { input: submission.input, meta: submission.meta },
    totalSteps: tasks.length,
    workflowDefinition: definition,
    workflowHash: workflowHash(definition),
    traceContext: ctx.trace,
    ...(ctx.idempotency ? { idempotencyKey: ctx.idempotency.key, requestHash: ctx.idempotency.requestHash } : {}),
  };
  const ready = tasks
    .filter((task) => (task.dependsOn ?? []).length === 0)
    .map((task) => ({ taskId: task.taskId, jobId, tenantId: ctx.tenantId, role: task.role, traceContext: ctx.trace }));
  return { jobId, root, tasks, ready };
}
