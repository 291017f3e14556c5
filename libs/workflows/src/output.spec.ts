import { join } from 'node:path';
import type { CallStep } from './compiled-workflow';
import { validateAgainstSchema } from './json-schema';
import { loadWorkflowsDir } from './load-workflows';
import { outputInstructions, renderMessages, responseFormat, SUMMARY_INSTRUCTIONS, stepsOf, taskTimeoutMs, validateOutput, validateSummary } from './output';
import { validatePlan } from './plan';
import { buildJobResult } from './result';
import { DEFAULT_CLOUD_TASK_TIMEOUT_MS, DEFAULT_LOCAL_TASK_TIMEOUT_MS } from './workflow-definition';

const { workflows } = loadWorkflowsDir(join(__dirname, '../../../config/workflows'));
const incident = workflows.get('incident_review')!;
const research = workflows.get('research_report')!;
const goal = workflows.get('goal')!;
const agent = (workflow: typeof incident, role: string) => workflow.agentsByRole.get(role)!;

describe('output formats', () => {
  it('sends a declared output schema as strict json_schema, additionalProperties false on every object', () => {
    expect(responseFormat(agent(incident, 'triage'))).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'incident_review_triage',
        strict: true,
        schema: {
          type: 'object',
          required: ['severity', 'category', 'rationale'],
          additionalProperties: false,
          properties: {
            severity: { type: 'string', enum: ['low', 'medium', 'high', 'critical'] },
            category: { type: 'string', enum: ['availability', 'latency', 'data', 'security', 'other'] },
            rationale: { type: 'string' },
          },
        },
      },
    });
    expect(outputInstructions(agent(incident, 'triage'))).toMatch(/^Answer with one JSON object and nothing else, matching this JSON Schema: \{/);
  });

  it('asks for the structured summary by default and the plan from a planner', () => {
    expect(responseFormat(agent(incident, 'merge'))).toBeNull();
    expect(outputInstructions(agent(incident, 'merge'))).toBe(SUMMARY_INSTRUCTIONS);
    expect(responseFormat(goal.planner!)?.json_schema.name).toBe('switchyard_plan');
    expect(responseFormat(goal.planner!)?.json_schema.schema).toMatchObject({ properties: { subtasks: { items: { properties: { role: { enum: ['researcher', 'analyst', 'writer'] } } } } } });
  });

  it('validates a reply against the declared schema, naming the failing path', () => {
    const schema = (stepsOf(agent(incident, 'triage'))[1] as CallStep).output!;
    expect(validateOutput(schema, { severity: 'high', category: 'data', rationale: 'r' }).ok).toBe(true);
    const bad = validateOutput(schema, { severity: 'urgent', category: 'data' });
    expect(bad.ok ? [] : bad.issues.map((i) => i.path)).toEqual(['severity', 'rationale']);
  });

  it('accepts a summary only with a confidence', () => {
    expect(validateSummary({ conclusion: 'c', evidence: [], confidence: 0.4 }).ok).toBe(true);
    expect(validateSummary({ conclusion: 'c', evidence: [], confidence: null }).ok).toBe(false);
    expect(validateSummary({ conclusion: 'c' }).ok).toBe(false);
  });

  it('puts the output instructions in the system message even when the agent has no system prompt', () => {
    const historian = stepsOf(agent(incident, 'historian'))[1] as CallStep;
    const { messages } = renderMessages(historian, { input: { summary: 'DB down' }, outputs: { triage: { severity: 'high', category: 'data', rationale: 'r' } } });
    expect(messages[1]).toEqual({ role: 'user', content: 'A high data incident: DB down' });
    const stepWithout = { ...historian, system: undefined } as unknown as CallStep;
    expect(renderMessages(stepWithout, { input: {} }).messages[0]).toEqual({ role: 'system', content: SUMMARY_INSTRUCTIONS });
  });
});

describe('task timeouts', () => {
  it('uses the agent timeout, else 90 s when every call is local and 180 s otherwise', () => {
    expect(taskTimeoutMs(agent(incident, 'merge'), true)).toBe(180_000);
    expect(taskTimeoutMs(agent(incident, 'triage'), true)).toBe(DEFAULT_LOCAL_TASK_TIMEOUT_MS);
    expect(taskTimeoutMs(agent(incident, 'triage'), false)).toBe(DEFAULT_CLOUD_TASK_TIMEOUT_MS);
    expect([DEFAULT_LOCAL_TASK_TIMEOUT_MS, DEFAULT_CLOUD_TASK_TIMEOUT_MS]).toEqual([90_000, 180_000]);
  });
});

describe('the shipped workflows', () => {
  it('incident_review: triage, then the log readers beside the optional historian, then merge', () => {
    expect(incident.levels).toEqual([['triage'], ['log_reader', 'historian'], ['merge']]);
    expect(agent(incident, 'historian').optional).toBe(true);
    const input = { summary: 'Checkout fails', logs: [{ id: 'api', text: 'HTTP 500 at checkout' }] };
    expect(validateInput(input)).toEqual([]);
    expect(validateInput({ summary: 'x', logs: [{ id: 'a' }] })).toEqual(['input.logs.0.text']);
  });

  it('research_report: outline, writers per section, then a two-step editor whose second step reads the first', () => {
    expect(research.levels).toEqual([['outline'], ['section_writer'], ['editor']]);
    expect(stepsOf(agent(research, 'editor')).map((s) => s.name)).toEqual(['gather', 'draft', 'tighten']);
    const tighten = stepsOf(agent(research, 'editor'))[2] as CallStep;
    const { messages } = renderMessages(tighten, { input: { audience: 'CFOs' }, steps: { draft: { conclusion: 'Draft text', evidence: ['e1'], confidence: 0.7 } } });
    expect(messages[1]!.content).toBe('Audience: CFOs\n\nDraft: Draft text\n\nEvidence: ["e1"]');
    const result = buildJobResult(research, {
      outline: [{ taskId: 'o', status: 'success', output: { thesis: 't', key_questions: [] } }],
      section_writer: [{ taskId: 's1', status: 'success', key: 'Costs', output: { conclusion: 'c', evidence: [], confidence: 0.6 } }],
      editor: [{ taskId: 'e', status: 'success', output: { conclusion: 'report', evidence: [], confidence: 0.8 } }],
    });
    expect(result).toEqual({
      report: { conclusion: 'report', evidence: [], confidence: 0.8 },
      outline: { thesis: 't', key_questions: [] },
      sections: [{ conclusion: 'c', evidence: [], confidence: 0.6, section: 'Costs', task_id: 's1' }],
    });
  });

  it('goal: a planner for researcher, analyst and writer, at most 5 subtasks, and combine after it', () => {
    expect(goal.planner?.plan).toEqual({ maxSubtasks: 5, roles: ['researcher', 'analyst', 'writer'] });
    expect(goal.levels).toEqual([['planner'], ['combine']]);
    expect(goal.result).toEqual({ kind: 'role', role: 'combine' });
    const plan = validatePlan({ subtasks: [{ id: 'r', role: 'researcher', instruction: 'find', depends_on: [] }, { id: 'w', role: 'writer', instruction: 'write', depends_on: ['r'] }] }, goal);
    expect(plan.ok && plan.plan.order).toEqual(['r', 'w']);
    const researcher = stepsOf(agent(goal, 'researcher'))[1] as CallStep;
    const { messages, warnings } = renderMessages(researcher, { input: { goal: 'G', context: 'C' }, task: { instruction: 'find' }, dependencies: [] });
    expect(warnings).toEqual([]);
    expect(messages[1]!.content).toBe('Overall goal: G\nContext: C\n\nYour subtask: find\n\nResults you build on:\n');
  });
});

function validateInput(input: unknown): string[] {
  const checked = validateAgainstSchema(incident.inputSchema, input, 'input');
  return checked.ok ? [] : checked.issues.map((i) => i.path);
}
