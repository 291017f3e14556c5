import { checkWorkflow, compileWorkflow } from './compile-workflow';
import { WorkflowDefinitionError, type CallStep } from './compiled-workflow';
import { stepsOf } from './output';
import type { WorkflowDefinition } from './workflow-definition';

/** A valid three-level workflow; each test breaks one thing. */
function incident(): WorkflowDefinition {
  return {
    type: 'incident_review',
    input: {
      type: 'object',
      required: ['summary', 'logs'],
      properties: {
        summary: { type: 'string', maxLength: 4000 },
        logs: { type: 'array', minItems: 1, items: { type: 'object', required: ['id', 'text'], properties: { id: { type: 'string' }, text: { type: 'string' } } } },
      },
    },
    agents: [
      {
        role: 'triage',
        meta: { task_type: 'classify', complexity: 'low' },
        prompt: { system: 'You classify incidents.', user: 'Incident: {{input.summary}}' },
        output: { type: 'object', required: ['severity'], properties: { severity: { type: 'string', enum: ['low', 'high'] } } },
      },
      {
        role: 'log_reader',
        for_each: 'logs',
        after: ['triage'],
        meta: { task_type: 'extract', complexity: 'low' },
        prompt: { user: 'Severity {{outputs.triage.severity}}. Log {{item.id}}: {{item.text}}' },
      },
      { role: 'historian', after: ['triage'], optional: true, prompt: { user: 'Earlier incidents like: {{input.summary}}' } },
      {
        role: 'merge',
        after: ['log_reader', 'historian'],
        timeout_ms: 180_000,
        prompt: { user: 'Findings: {{summaries.log_reader}} {{summaries.historian}}' },
      },
    ],
    result: 'merge',
  };
}

function issuesOf(definition: unknown): Array<{ path: string; message: string }> {
  const checked = checkWorkflow(definition, 'incident_review.yaml');
  if (checked.ok) throw new Error('expected the workflow to be rejected');
  for (const issue of checked.issues) expect(issue.file).toBe('incident_review.yaml');
  return checked.issues.map(({ path, message }) => ({ path, message }));
}

function withAgent(index: number, change: (agent: WorkflowDefinition['agents'][number]) => void): WorkflowDefinition {
  const definition = incident();
  change(definition.agents[index]!);
  return definition;
}

describe('compileWorkflow', () => {
  it('compiles the SPEC §6 example into three levels with upstream roles and runtime steps', () => {
    const workflow = compileWorkflow(incident(), 'incident_review.ts');
    expect(workflow.type).toBe('incident_review');
    expect(workflow.source).toBe('incident_review.ts');
    expect(workflow.levels).toEqual([['triage'], ['log_reader', 'historian'], ['merge']]);
    expect(workflow.agentsByRole.get('merge')!.upstream.sort()).toEqual(['historian', 'log_reader', 'triage']);
    expect(workflow.agentsByRole.get('log_reader')!.forEach).toEqual({ path: ['logs'] });
    expect(workflow.agentsByRole.get('historian')!.optional).toBe(true);
    expect(workflow.agentsByRole.get('merge')!.timeoutMs).toBe(180_000);
    expect(workflow.result).toEqual({ kind: 'role', role: 'merge' });
    const steps = stepsOf(workflow.agentsByRole.get('triage')!);
    expect(steps.map((s) => [s.kind, s.name])).toEqual([
      ['gather', 'gather'],
      ['call', 'triage'],
    ]);
    expect((steps[1] as CallStep).meta).toEqual({ task_type: 'classify', complexity: 'low' });
  });

  it('defaults the result to the last agent', () => {
    const definition = incident();
    delete definition.result;
    expect(compileWorkflow(definition, 'x').result).toEqual({ kind: 'role', role: 'merge' });
  });

  it('gives a steps agent its gather step and one call step per step, each with merged meta', () => {
    const definition = withAgent(3, (agent) => {
      delete agent.prompt;
      agent.meta = { task_type: 'reasoning', complexity: 'high' };
      agent.gather_step = 'collect';
      agent.steps = [
        { name: 'draft', prompt: { user: '{{summaries.log_reader}}' } },
        { name: 'polish', meta: { complexity: 'medium' }, prompt: { user: 'Improve: {{steps.draft.conclusion}}' } },
      ];
    });
    const steps = stepsOf(compileWorkflow(definition, 'x').agentsByRole.get('merge')!);
    expect(steps.map((s) => s.name)).toEqual(['collect', 'draft', 'polish']);
    expect((steps[2] as CallStep).meta).toEqual({ task_type: 'reasoning', complexity: 'medium' });
  });

  it('throws one error naming every problem for a TypeScript definition', () => {
    const definition = withAgent(2, (agent) => {
      agent.after = ['triag'];
    });
    definition.result = 'nobody';
    expect(() => compileWorkflow(definition, 'ts:incident')).toThrow(WorkflowDefinitionError);
    try {
      compileWorkflow(definition, 'ts:incident');
    } catch (error) {
      expect((error as WorkflowDefinitionError).issues.map((i) => i.path)).toEqual(['agents[2].after[0]', 'result']);
      expect((error as Error).message).toContain('ts:incident: agents[2].after[0]: unknown role "triag"');
    }
  });
});

describe('workflow errors name their path', () => {
  it('an unknown field', () => {
    expect(issuesOf(withAgent(2, (agent) => Object.assign(agent, { retries: 3 })))).toEqual([{ path: 'agents[2]', message: 'unknown field: retries' }]);
  });

  it('a missing prompt and steps', () => {
    expect(issuesOf(withAgent(2, (agent) => delete agent.prompt))).toEqual([{ path: 'agents[2]', message: 'give either prompt or steps (exactly one)' }]);
  });

  it('a duplicate role', () => {
    expect(issuesOf(withAgent(2, (agent) => (agent.role = 'triage')))).toContainEqual({ path: 'agents[2].role', message: 'duplicate role "triage" (also agents[0])' });
  });

  it('an unknown role in after', () => {
    expect(issuesOf(withAgent(2, (agent) => (agent.after = ['triage', 'triag'])))).toEqual([
      { path: 'agents[2].after[1]', message: 'unknown role "triag" (roles: triage, log_reader, historian, merge)' },
    ]);
  });

  it('an agent after itself', () => {
    expect(issuesOf(withAgent(2, (agent) => (agent.after = ['historian'])))).toEqual([{ path: 'agents[2].after[0]', message: '"historian" cannot come after itself' }]);
  });

  it('a cycle, reported with its path', () => {
    const issues = issuesOf(withAgent(0, (agent) => (agent.after = ['merge'])));
    expect(issues).toEqual([{ path: 'agents[0].after', message: 'dependency cycle: triage → merge → log_reader → triage' }]);
  });

  it('an unknown template variable', () => {
    expect(issuesOf(withAgent(2, (agent) => (agent.prompt = { user: 'Like {{incident.summary}}' })))).toEqual([
      {
        path: 'agents[2].prompt.user',
        message: '{{incident.summary}}: unknown variable "incident.summary" (known: input, item, outputs, summaries, task, steps, dependencies, subtasks)',
      },
    ]);
  });

  it('an input field the input schema does not declare', () => {
    expect(issuesOf(withAgent(2, (agent) => (agent.prompt = { system: 'About {{input.sumary}}', user: 'x' })))).toEqual([
      { path: 'agents[2].prompt.system', message: '{{input.sumary}}: "sumary" is not declared in the schema' },
    ]);
  });

  it('item outside a for_each agent, and an item field the items do not declare', () => {
    expect(issuesOf(withAgent(2, (agent) => (agent.prompt = { user: '{{item.id}}' })))).toEqual([
      { path: 'agents[2].prompt.user', message: '{{item.id}}: item is only defined in a for_each agent' },
    ]);
    expect(issuesOf(withAgent(1, (agent) => (agent.prompt = { user: '{{item.body}}' })))).toEqual([
      { path: 'agents[1].prompt.user', message: '{{item.body}}: "body" is not declared in the schema' },
    ]);
  });

  it('outputs of a role that is not upstream, of a for_each role, or a field its output lacks', () => {
    expect(issuesOf(withAgent(2, (agent) => (agent.prompt = { user: '{{outputs.merge.conclusion}}' })))).toEqual([
      { path: 'agents[2].prompt.user', message: '{{outputs.merge.conclusion}}: "merge" does not come before "historian" (add it to after)' },
    ]);
    expect(issuesOf(withAgent(3, (agent) => (agent.prompt = { user: '{{outputs.log_reader.conclusion}}' })))).toEqual([
      { path: 'agents[3].prompt.user', message: '{{outputs.log_reader.conclusion}}: "log_reader" has one task per item: use {{summaries.log_reader}}' },
    ]);
    expect(issuesOf(withAgent(3, (agent) => (agent.prompt = { user: '{{outputs.triage.severty}} {{outputs.historian.conclusion}}' })))).toEqual([
      { path: 'agents[3].prompt.user', message: '{{outputs.triage.severty}}: "severty" is not declared in the schema' },
    ]);
  });

  it('reaches outputs transitively upstream', () => {
    const definition = withAgent(3, (agent) => (agent.prompt = { user: '{{outputs.triage.severity}} {{summaries.log_reader}}' }));
    expect(checkWorkflow(definition, 'x').ok).toBe(true);
  });

  it('summaries of a role that is not upstream', () => {
    expect(issuesOf(withAgent(1, (agent) => (agent.prompt = { user: '{{summaries.historian}}' })))).toEqual([
      { path: 'agents[1].prompt.user', message: '{{summaries.historian}}: "historian" does not come before "log_reader" (add it to after)' },
    ]);
  });

  it('task.instruction, dependencies and subtasks outside a goal workflow', () => {
    expect(issuesOf(withAgent(2, (agent) => (agent.prompt = { user: '{{task.instruction}} {{dependencies}} {{subtasks}}' })))).toEqual([
      { path: 'agents[2].prompt.user', message: '{{task.instruction}}: task.instruction is only defined in a planned role' },
      { path: 'agents[2].prompt.user', message: '{{dependencies}}: dependencies is only defined in a planned role' },
      { path: 'agents[2].prompt.user', message: '{{subtasks}}: subtasks is only defined in an agent that comes after the planner' },
    ]);
  });

  it('an unclosed placeholder and an unknown filter', () => {
    expect(issuesOf(withAgent(2, (agent) => (agent.prompt = { user: 'x {{input.summary | shout}} {{input.summary' })))).toEqual([
      { path: 'agents[2].prompt.user', message: '{{input.summary | shout}}: unknown filter "shout" (known: passages, passages_note, json)' },
      { path: 'agents[2].prompt.user', message: '"{{" at character 28 is never closed with "}}"' },
    ]);
  });

  it('a step that reads a later step', () => {
    const definition = withAgent(3, (agent) => {
      delete agent.prompt;
      agent.steps = [
        { name: 'draft', prompt: { user: '{{steps.polish.conclusion}}' } },
        { name: 'polish', prompt: { user: 'x' } },
      ];
    });
    expect(issuesOf(definition)).toEqual([{ path: 'agents[3].steps[0].prompt.user', message: '{{steps.polish.conclusion}}: "polish" is not an earlier step of this agent' }]);
  });

  it('a for_each that is not an array of the input', () => {
    expect(issuesOf(withAgent(1, (agent) => (agent.for_each = 'summary')))).toContainEqual({
      path: 'agents[1].for_each',
      message: '"summary" is not an array in the input schema',
    });
    expect(issuesOf(withAgent(1, (agent) => (agent.for_each = 'input.traces')))).toContainEqual({
      path: 'agents[1].for_each',
      message: '"input.traces" is not an array in the input schema: "traces" is not declared in the schema',
    });
  });

  it('a key field the items do not declare, and a key without for_each', () => {
    expect(issuesOf(withAgent(1, (agent) => (agent.key = { from: 'name' })))).toEqual([
      { path: 'agents[1].key.from', message: '"name" is not declared in the schema (the items of logs)' },
    ]);
    expect(issuesOf(withAgent(2, (agent) => (agent.key = { from: 'id' })))).toEqual([
      { path: 'agents[2].key', message: 'key labels the tasks of a for_each agent; this agent has no for_each' },
    ]);
  });

  it('sensitivity in meta', () => {
    expect(issuesOf(withAgent(0, (agent) => Object.assign(agent.meta!, { sensitivity: 'public' })))).toEqual([
      { path: 'agents[0].meta.sensitivity', message: 'sensitivity comes from the job (its meta.sensitivity), a workflow cannot set it' },
    ]);
  });

  it('a meta value outside the request meta', () => {
    expect(issuesOf(withAgent(0, (agent) => Object.assign(agent.meta!, { task_type: 'dance' })))[0]!.path).toBe('agents[0].meta.task_type');
  });

  it('an output schema that strict structured output cannot take', () => {
    const definition = withAgent(0, (agent) => {
      agent.output = { type: 'object', required: [], properties: { severity: { type: 'string' } }, additionalProperties: true };
    });
    expect(issuesOf(definition)).toEqual([
      { path: 'agents[0].output.required', message: '"severity" must be required: strict structured output requires every property' },
      { path: 'agents[0].output.additionalProperties', message: 'must be false (or left out) for strict structured output' },
    ]);
  });

  it('an input schema that is not a usable object schema', () => {
    const definition = incident();
    definition.input = { type: 'strin' };
    const issues = issuesOf(definition);
    expect(issues[0]).toEqual({ path: 'input.type', message: 'the input schema must be `type: object`' });
    expect(issues[1]!.path).toBe('input');
    expect(issues[1]!.message).toMatch(/^not a usable JSON Schema/);
  });

  it('a result naming an unknown role, or outputs of a for_each role', () => {
    const unknown = incident();
    unknown.result = 'merger';
    expect(issuesOf(unknown)).toEqual([{ path: 'result', message: 'unknown role "merger"' }]);
    const map = incident();
    map.result = { review: 'outputs.merge', logs: 'outputs.log_reader', bad: 'merge' };
    expect(issuesOf(map)).toEqual([
      { path: 'result.logs', message: '"log_reader" has one task per item: use summaries.log_reader' },
      { path: 'result.bad', message: '"merge" must be outputs.ROLE or summaries.ROLE' },
    ]);
  });

  it('a reserved role name and a badly formed one', () => {
    expect(issuesOf(withAgent(2, (agent) => (agent.role = 'job')))).toContainEqual({ path: 'agents[2].role', message: '"job" is reserved for the runtime\'s own rows' });
    expect(issuesOf(withAgent(2, (agent) => (agent.role = 'Log Reader')))[0]!.path).toBe('agents[2].role');
  });
});

describe('goal workflows', () => {
  function goal(): WorkflowDefinition {
    return {
      type: 'goal',
      input: { type: 'object', required: ['goal'], properties: { goal: { type: 'string' } } },
      agents: [
        { role: 'planner', meta: { task_type: 'plan' }, plan: { roles: ['researcher', 'writer'] }, prompt: { user: 'Goal: {{input.goal}}' } },
        { role: 'researcher', planned: true, prompt: { user: '{{task.instruction}} {{dependencies}} {{outputs.planner.subtasks}}' } },
        { role: 'writer', planned: true, prompt: { user: '{{task.instruction}} {{dependencies}}' } },
        { role: 'combine', after: ['planner'], prompt: { user: '{{input.goal}} {{subtasks}}' } },
      ],
    };
  }

  it('compiles the planner, the planned roles and the combiner', () => {
    const workflow = compileWorkflow(goal(), 'goal.yaml');
    expect(workflow.planner?.role).toBe('planner');
    expect(workflow.planner?.plan).toEqual({ maxSubtasks: 5, roles: ['researcher', 'writer'] });
    expect(workflow.levels).toEqual([['planner'], ['combine']]);
    expect(workflow.agentsByRole.get('researcher')).toMatchObject({ planned: true, after: ['planner'], upstream: ['planner'] });
    expect(workflow.result).toEqual({ kind: 'role', role: 'combine' });
    expect((stepsOf(workflow.planner!)[1] as CallStep).plan).toEqual({ maxSubtasks: 5, roles: ['researcher', 'writer'] });
  });

  it('refuses a planned role not in plan.roles, a plan role that is not planned, and after on a planned role', () => {
    const definition = goal();
    definition.agents[0]!.plan = { roles: ['researcher', 'combine'] };
    definition.agents[2]!.after = ['researcher'];
    expect(issuesOf(definition)).toEqual([
      { path: 'agents[2].planned', message: '"writer" is planned but not in agents[0].plan.roles' },
      { path: 'agents[2].after', message: 'a planned role runs after the planner and its plan dependencies; it cannot list after' },
      { path: 'agents[0].plan.roles[1]', message: '"combine" must be an agent with planned: true' },
      { path: 'agents[2].after[0]', message: '"researcher" is planned; come after the planner "planner" instead' },
    ]);
  });

  it('refuses a planned role without a planner and a result naming a planned role', () => {
    const definition = goal();
    delete definition.agents[0]!.plan;
    definition.result = 'writer';
    const issues = issuesOf(definition);
    expect(issues).toContainEqual({ path: 'agents[1].planned', message: 'a planned role needs a planner: an agent with plan: {roles: [...]}' });
    expect(issues).toContainEqual({ path: 'result', message: '"writer" is planned; name the agent that combines the subtasks' });
  });

  it('refuses subtasks in an agent that does not come after the planner', () => {
    const definition = goal();
    definition.agents.push({ role: 'stray', prompt: { user: '{{subtasks}}' } });
    expect(issuesOf(definition)).toEqual([{ path: 'agents[4].prompt.user', message: '{{subtasks}}: subtasks is only defined in an agent that comes after the planner' }]);
  });
});
