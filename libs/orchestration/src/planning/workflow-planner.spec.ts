import { join } from 'node:path';
import { loadWorkflowsDir } from '@switchyard/workflows';
import { workflowHash } from '../workflows/workflow-versions';
import { parseWorkflowSubmission, planWorkflowJob } from './workflow-planner';

const { workflows } = loadWorkflowsDir(join(__dirname, '../../../../config/workflows'));

function counter() {
  let n = 0;
  return () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
}

const incident = {
  type: 'incident_review',
  input: {
    summary: 'Checkout is down',
    logs: [
      { id: 'gw', text: '502s' },
      { id: 'app', text: 'pool exhausted' },
    ],
  },
};

describe('planWorkflowJob', () => {
  it('plans incident_review as a DAG: a task per agent, one per log, depends_on from after, in dependency order', () => {
    const { workflow, submission } = parseWorkflowSubmission(incident, workflows);
    const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    const plan = planWorkflowJob(workflow, submission, { tenantId: 'acme', newId: counter(), trace });
    const ids = Object.fromEntries(plan.tasks.map((t) => [t.agentId, t.taskId]));
    expect(plan.tasks.map((t) => [t.agentId, t.role, t.ordinal, t.optional, t.totalSteps])).toEqual([
      ['triage', 'triage', 0, false, 2],
      ['log_reader-1', 'log_reader', 1, false, 2],
      ['log_reader-2', 'log_reader', 2, false, 2],
      ['historian', 'historian', 3, true, 2],
      ['merge', 'merge', 4, false, 2],
    ]);
    expect(plan.tasks.map((t) => t.dependsOn)).toEqual([[], [ids.triage], [ids.triage], [ids.triage], [ids['log_reader-1'], ids['log_reader-2'], ids.historian]]);
    expect(plan.tasks[1]!.inputSummary).toEqual({ item: { id: 'gw', text: '502s' }, item_index: 0, item_key: 'gw' });
    for (const task of plan.tasks) expect(task).toMatchObject({ parentTaskId: plan.jobId, jobId: plan.jobId, traceContext: trace });
    // Only the task without dependencies is enqueued at submit; the others as their dependencies finish.
    expect(plan.ready).toEqual([{ taskId: ids.triage, jobId: plan.jobId, tenantId: 'acme', role: 'triage', traceContext: trace }]);
  });

  it('keeps on the root row what workers need to run the job even if the file changes: the definition and its hash', () => {
    const { workflow, submission } = parseWorkflowSubmission(incident, workflows);
    const plan = planWorkflowJob(workflow, submission, { tenantId: 'acme', newId: counter(), trace: {}, idempotency: { key: 'k', requestHash: 'h' } });
    expect(plan.root).toMatchObject({
      taskId: plan.jobId,
      parentTaskId: null,
      role: 'job',
      jobType: 'incident_review',
      totalSteps: 5,
      inputSummary: { input: incident.input, meta: { sensitivity: 'internal', priority: 'normal', tags: [] } },
      workflowDefinition: workflow.definition,
      workflowHash: workflowHash(workflow.definition),
      idempotencyKey: 'k',
      requestHash: 'h',
    });
  });

  it('plans doc_review as before: extract-1..n (steps prepare, extract), then synthesize after all of them', () => {
    const { workflow, submission } = parseWorkflowSubmission(
      { type: 'doc_review', input: { question: 'q', documents: [{ id: 'a', text: 'x' }, { id: 'b', text: 'y' }] } },
      workflows,
    );
    const plan = planWorkflowJob(workflow, submission, { tenantId: 't', newId: counter(), trace: {} });
    expect(plan.tasks.map((t) => t.agentId)).toEqual(['extract-1', 'extract-2', 'synthesize']);
    expect(plan.tasks[2]!.dependsOn).toEqual([plan.tasks[0]!.taskId, plan.tasks[1]!.taskId]);
    expect(plan.ready.map((t) => t.role)).toEqual(['extract', 'extract']);
  });
});

describe('parseWorkflowSubmission', () => {
  it('accepts a goal job and plans its planner first, then combine after it; the subtasks come from the plan', () => {
    const { workflow, submission } = parseWorkflowSubmission({ type: 'goal', input: { goal: 'Compare two queues', context: 'for a bank' } }, workflows);
    const plan = planWorkflowJob(workflow, submission, { tenantId: 't', newId: counter(), trace: {} });
    expect(plan.tasks.map((t) => [t.role, t.ordinal, t.totalSteps])).toEqual([
      ['planner', 0, 2],
      ['combine', 1, 2],
    ]);
    expect(plan.tasks[1]!.dependsOn).toEqual([plan.tasks[0]!.taskId]);
    expect(plan.ready.map((t) => t.role)).toEqual(['planner']);
  });

  it('checks a goal input against its schema', () => {
    expect(() => parseWorkflowSubmission({ type: 'goal', input: { context: 'no goal' } }, workflows)).toThrow(/goal/);
  });
});
