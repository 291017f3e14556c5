import { join } from 'node:path';
import { loadWorkflowsDir, type CallStep, type CompiledWorkflow } from '@switchyard/workflows';
import { isTransient } from '../runner/failure';
import { inputArraysNotRead } from '../runner/task-runner';
import { BadOutputError, callMeta, gatherUpstream, jobResultOf, runCallStep } from './agent-runtime';
import type { ModelChatRequest, ModelChatResult, ModelRouter } from './model-router.port';

const { workflows } = loadWorkflowsDir(join(__dirname, '../../../../config/workflows'));
const incident = workflows.get('incident_review')!;
const docReview = workflows.get('doc_review')!;
const callStep = (workflow: CompiledWorkflow, role: string) => workflow.agentsByRole.get(role)!.steps[1] as CallStep;

/** A router that answers each call with the next reply, from the target it names, never twice from an excluded one. */
class ScriptedRouter implements ModelRouter {
  readonly requests: ModelChatRequest[] = [];
  readonly badOutputs: string[] = [];
  constructor(private readonly replies: Array<{ target: string; content: string } | Error>) {}
  async chat(request: ModelChatRequest): Promise<ModelChatResult> {
    this.requests.push(request);
    const reply = this.replies.shift();
    if (!reply) throw new Error('no more scripted replies');
    if (reply instanceof Error) throw reply;
    if (request.excludeTargets?.includes(reply.target)) throw new Error(`scripted reply from excluded ${reply.target}`);
    const attempt = { target: reply.target, model: 'm', rule: 'r', outcome: 'ok' as const, latencyMs: 1 };
    return { content: reply.content, target: reply.target, model: 'm', rule: 'r', usage: { inputTokens: 1, outputTokens: 1 }, latencyMs: 1, costUsd: 0.01, attempts: [attempt] };
  }
  reportBadOutput(target: string): void {
    this.badOutputs.push(target);
  }
}

const call = { step: 1, headers: {}, context: { tenantId: 't', jobId: 'j', taskId: 'task', step: 1 }, signal: new AbortController().signal };
const meta = callMeta(callStep(incident, 'triage'), { sensitivity: 'internal', priority: 'normal', tags: [] });
const messages = [{ role: 'user' as const, content: 'incident' }];
const valid = JSON.stringify({ severity: 'high', category: 'availability', rationale: 'checkout down' });
const wrongShape = JSON.stringify({ severity: 'catastrophic', category: 'availability', rationale: 'x' });

describe('runCallStep with a declared output (response_format json_schema)', () => {
  it('sends the strict schema and returns the validated reply', async () => {
    const router = new ScriptedRouter([{ target: 'local_a', content: valid }]);
    const result = await runCallStep(router, callStep(incident, 'triage'), messages, meta, call);
    expect(result.output).toEqual(JSON.parse(valid));
    expect(router.requests[0]!.responseFormat).toMatchObject({ type: 'json_schema', json_schema: { name: expect.any(String), strict: true } });
    expect(router.requests[0]!.jsonMode).toBeUndefined();
  });

  it('counts a reply of the wrong shape as bad output of its target and asks elsewhere once', async () => {
    const router = new ScriptedRouter([
      { target: 'local_a', content: wrongShape },
      { target: 'cloud_b', content: valid },
    ]);
    const result = await runCallStep(router, callStep(incident, 'triage'), messages, meta, call);
    expect(result.output).toEqual(JSON.parse(valid));
    expect(router.badOutputs).toEqual(['local_a']);
    expect(router.requests[1]!.excludeTargets).toEqual(['local_a']);
    expect(result.routes.map((r) => [r.target, r.outcome])).toEqual([
      ['local_a', 'bad_output'],
      ['cloud_b', 'ok'],
    ]);
    expect(result.costUsd).toBeCloseTo(0.02);
  });

  it('fails the task for good when the second reply does not match either (no retry of the task)', async () => {
    const router = new ScriptedRouter([
      { target: 'local_a', content: wrongShape },
      { target: 'cloud_b', content: 'Sure! The severity is high.' },
    ]);
    const error = await runCallStep(router, callStep(incident, 'triage'), messages, meta, call).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadOutputError);
    expect(isTransient(error)).toBe(false);
    expect((error as Error).message).toMatch(/local_vllm|local_a/);
    // Not JSON at all: the router itself counted the second one.
    expect(router.badOutputs).toEqual(['local_a']);
  });

  it('fails when no other target can be asked again', async () => {
    const router = new ScriptedRouter([{ target: 'local_a', content: wrongShape }, new Error('no eligible target')]);
    await expect(runCallStep(router, callStep(incident, 'triage'), messages, meta, call)).rejects.toBeInstanceOf(BadOutputError);
  });
});

describe('runCallStep for a planner (switchyard_plan)', () => {
  const goal = workflows.get('goal')!;
  const planMeta = callMeta(callStep(goal, 'planner'), { sensitivity: 'sensitive', priority: 'normal', tags: [] });
  const goodPlan = JSON.stringify({
    subtasks: [
      { id: 'r', role: 'researcher', instruction: 'find', depends_on: [] },
      { id: 'w', role: 'writer', instruction: 'write', depends_on: ['r'] },
    ],
  });
  const cyclicPlan = JSON.stringify({
    subtasks: [
      { id: 'a', role: 'researcher', instruction: 'x', depends_on: ['b'] },
      { id: 'b', role: 'writer', instruction: 'y', depends_on: ['a'] },
    ],
  });

  it('asks with the SPEC response_format and task_type plan, and returns the validated plan', async () => {
    const router = new ScriptedRouter([{ target: 'local_a', content: goodPlan }]);
    const result = await runCallStep(router, callStep(goal, 'planner'), messages, planMeta, call);
    expect(router.requests[0]!.responseFormat).toMatchObject({ type: 'json_schema', json_schema: { name: 'switchyard_plan', strict: true } });
    expect(router.requests[0]!.meta).toMatchObject({ task_type: 'plan', sensitivity: 'sensitive' });
    expect(result.output).toEqual(JSON.parse(goodPlan));
  });

  it('re-asks a bad plan once elsewhere, reporting the bad output of the target that gave it', async () => {
    const router = new ScriptedRouter([
      { target: 'local_a', content: cyclicPlan },
      { target: 'local_b', content: goodPlan },
    ]);
    const result = await runCallStep(router, callStep(goal, 'planner'), messages, planMeta, call);
    expect(router.requests[1]!.excludeTargets).toEqual(['local_a']);
    expect(router.badOutputs).toEqual(['local_a']);
    expect(result.routes.map((r) => [r.target, r.outcome])).toEqual([
      ['local_a', 'bad_output'],
      ['local_b', 'ok'],
    ]);
    expect(result.output).toEqual(JSON.parse(goodPlan));
  });

  it('fails for good with the reason when the second plan is bad too', async () => {
    const router = new ScriptedRouter([
      { target: 'local_a', content: cyclicPlan },
      { target: 'local_b', content: JSON.stringify({ subtasks: [{ id: 'x', role: 'combine', instruction: 'i', depends_on: [] }] }) },
    ]);
    const error = await runCallStep(router, callStep(goal, 'planner'), messages, planMeta, call).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadOutputError);
    expect((error as Error).message).toMatch(/local_a and local_b are not valid plans .*unknown role "combine"/);
    expect(router.badOutputs).toEqual(['local_a', 'local_b']);
  });
});

describe('runCallStep with the default summary', () => {
  it('asks in JSON mode and keeps the raw text with confidence null when no target answers a summary', async () => {
    const router = new ScriptedRouter([
      { target: 'local_a', content: 'not json' },
      { target: 'cloud_b', content: 'still not json' },
    ]);
    const result = await runCallStep(router, callStep(incident, 'merge'), messages, meta, call);
    expect(router.requests[0]).toMatchObject({ jsonMode: true });
    expect(router.requests[0]!.responseFormat).toBeUndefined();
    expect(result.output).toEqual({ conclusion: 'still not json', evidence: [], confidence: null });
  });
});

describe('callMeta', () => {
  it("is the step's meta with the job's sensitivity, priority, business type and tags", () => {
    const step = callStep(incident, 'merge');
    expect(callMeta(step, { sensitivity: 'sensitive', priority: 'high', business_type: 'ops', tags: ['p1'] })).toEqual({
      task_type: 'reasoning',
      complexity: 'high',
      sensitivity: 'sensitive',
      priority: 'high',
      business_type: 'ops',
      tags: ['p1'],
      max_output_tokens: 1024,
    });
  });
});

describe('gatherUpstream and jobResultOf', () => {
  const merge = incident.agentsByRole.get('merge')!;
  const outcomes = [
    { taskId: 't1', role: 'triage', status: 'success' as const, output: { severity: 'high', category: 'availability', rationale: 'r' } },
    { taskId: 'l1', role: 'log_reader', status: 'success' as const, output: { conclusion: 'gw 502', evidence: [], confidence: 0.8, log_id: 'gw' }, key: 'gw' },
    { taskId: 'l2', role: 'log_reader', status: 'success' as const, output: { conclusion: 'pool', evidence: [], confidence: 0.8, log_id: 'app' }, key: 'app' },
    { taskId: 'h1', role: 'historian', status: 'skipped' as const, output: null },
  ];

  it("gives outputs of single upstream tasks that succeeded, and every upstream task's outcome for summaries", () => {
    const gathered = gatherUpstream(merge, incident, outcomes);
    expect(gathered.outputs).toEqual({ triage: outcomes[0]!.output });
    expect(gathered.summaries.log_reader!.map((t) => t.key)).toEqual(['gw', 'app']);
    expect(gathered.summaries.historian).toEqual([{ taskId: 'h1', status: 'skipped', output: null }]);
  });

  it('builds the result the workflow declares', () => {
    const result = jobResultOf(incident, [...outcomes, { taskId: 'm1', role: 'merge', status: 'success', output: { conclusion: 'c', evidence: [], confidence: 0.9 } }]) as Record<string, unknown>;
    expect(result.review).toEqual({ conclusion: 'c', evidence: [], confidence: 0.9 });
    expect(result.triage).toEqual(outcomes[0]!.output);
    expect((result.logs as Array<{ log_id: string }>).map((l) => l.log_id)).toEqual(['gw', 'app']);
  });
});

describe('inputArraysNotRead', () => {
  it('leaves the documents out of what extract and synthesize read (each extract has its own document)', () => {
    expect(inputArraysNotRead(docReview, docReview.agentsByRole.get('extract')!)).toEqual([['documents']]);
    expect(inputArraysNotRead(docReview, docReview.agentsByRole.get('synthesize')!)).toEqual([['documents']]);
  });

  it('keeps an array an agent reads (research_report reads input.sections whole in its outline)', () => {
    const report = workflows.get('research_report')!;
    expect(inputArraysNotRead(report, report.agentsByRole.get('outline')!)).toEqual([]);
    expect(inputArraysNotRead(report, report.agentsByRole.get('editor')!)).toEqual([['sections']]);
  });
});
