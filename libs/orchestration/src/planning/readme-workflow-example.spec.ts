import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkflowYaml } from '@switchyard/workflows';
import { parseWorkflowSubmission, planWorkflowJob } from './workflow-planner';

/** The root README's "Add a workflow" example must load, accept the input it shows, and plan as it says. */
const readme = readFileSync(join(__dirname, '../../../../README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Add a workflow'));
const example = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
const body = JSON.parse(/-d '(\{[^']*\})'/.exec(section)![1]!) as unknown;

describe('README "Add a workflow" example', () => {
  it('loads, takes the input the README submits, and plans one poet per topic before the judge', () => {
    const checked = parseWorkflowYaml(example, 'haiku_review.yaml');
    expect(checked.ok ? [] : checked.issues).toEqual([]);
    if (!checked.ok) return;
    const { workflow, submission } = parseWorkflowSubmission(body, new Map([[checked.workflow.type, checked.workflow]]));
    let n = 0;
    const plan = planWorkflowJob(workflow, submission, { tenantId: 't', newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`, trace: {} });
    expect(plan.tasks.map((t) => t.agentId)).toEqual(['poet-1', 'poet-2', 'judge']);
    expect(plan.ready.map((t) => t.role)).toEqual(['poet', 'poet']);
  });
});
