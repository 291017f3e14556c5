import { join } from 'node:path';
import { loadWorkflowsDir, validatePlan } from '@switchyard/workflows';
import { materialisePlan, type PlannerTask } from './plan-materialisation';

const goal = loadWorkflowsDir(join(__dirname, '../../../../config/workflows')).workflows.get('goal')!;

function counter() {
  let n = 0;
  return () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
}

const planner: PlannerTask = {
  taskId: 'aaaaaaaa-0000-4000-8000-000000000001',
  jobId: 'aaaaaaaa-0000-4000-8000-000000000000',
  tenantId: 'acme',
  jobType: 'goal',
  ordinal: 0,
  traceContext: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
};

describe('materialisePlan', () => {
  it('makes a row per subtask under the planner, depends_on = the planner and its plan dependencies as task ids', () => {
    const checked = validatePlan(
      {
        subtasks: [
          { id: 'facts', role: 'researcher', instruction: 'Find the prices', depends_on: [] },
          { id: 'math', role: 'analyst', instruction: 'Compare them', depends_on: ['facts'] },
          { id: 'memo', role: 'writer', instruction: 'Write the memo', depends_on: ['math', 'facts'] },
        ],
      },
      goal,
    );
    if (!checked.ok) throw new Error(checked.reasons.join('; '));
    const rows = materialisePlan(checked.plan.subtasks, planner, goal, counter());
    const [facts, math, memo] = rows.map((row) => row.taskId);
    expect(rows.map((row) => [row.taskId, row.role, row.agentId, row.ordinal, row.totalSteps, row.dependsOn])).toEqual([
      [facts, 'researcher', 'researcher:facts', 1, 2, [planner.taskId]],
      [math, 'analyst', 'analyst:math', 2, 2, [planner.taskId, facts]],
      [memo, 'writer', 'writer:memo', 3, 2, [planner.taskId, math, facts]],
    ]);
    expect(new Set([facts, math, memo]).size).toBe(3);
    for (const row of rows) {
      expect(row).toMatchObject({ jobId: planner.jobId, tenantId: 'acme', jobType: 'goal', parentTaskId: planner.taskId, optional: false, traceContext: planner.traceContext });
    }
    expect(rows[1]!.inputSummary).toEqual({ instruction: 'Compare them', item_key: 'math' });
  });

  it('refuses a subtask whose role is not planned or whose dependency is not in the plan (the plan was not validated)', () => {
    expect(() => materialisePlan([{ id: 'x', role: 'combine', instruction: 'i', depends_on: [] }], planner, goal, counter())).toThrow(/no planned role "combine"/);
    expect(() => materialisePlan([{ id: 'x', role: 'writer', instruction: 'i', depends_on: ['y'] }], planner, goal, counter())).toThrow(/not in the plan/);
  });
});
