import {
  WorkflowDefinitionError,
  type CallMeta,
  type CallStep,
  type CompiledAgent,
  type CompiledPlanSettings,
  type CompiledWorkflow,
  type GatherStep,
  type ResultReference,
  type ResultSpec,
  type WorkflowIssue,
} from './compiled-workflow';
import { findCycle, topologicalLevels, upstreamOf } from './dag';
import { isRecord, jsonSchemaProblem, schemaAt, strictOutputProblems, type JsonSchema } from './json-schema';
import { SUMMARY_OUTPUT_SCHEMA } from './output';
import { planSchema } from './plan';
import { parseTemplate, referencesOf, type CompiledTemplate, type SummaryLabels, type TemplateReference } from './template';
import {
  DEFAULT_GATHER_STEP,
  DEFAULT_MAX_SUBTASKS,
  RESERVED_ROLES,
  WorkflowDefinitionSchema,
  type AgentDefinition,
  type WorkflowDefinition,
} from './workflow-definition';

type Path = ReadonlyArray<string | number>;

/** `agents[2].prompt.user` */
export function formatDefinitionPath(path: Path): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : out ? `.${part}` : part;
  return out || '(root)';
}

export type WorkflowCheck = { ok: true; workflow: CompiledWorkflow } | { ok: false; issues: WorkflowIssue[] };

/** Compiles a definition (e.g. one declared in TypeScript); throws `WorkflowDefinitionError` naming every problem. */
export function compileWorkflow(definition: WorkflowDefinition, source: string): CompiledWorkflow {
  const checked = checkWorkflow(definition, source);
  if (!checked.ok) throw new WorkflowDefinitionError(checked.issues);
  return checked.workflow;
}

/** Validates and compiles a parsed workflow document; every problem is reported with its path. */
export function checkWorkflow(value: unknown, source: string): WorkflowCheck {
  const parsed = WorkflowDefinitionSchema.safeParse(value);
  if (!parsed.success) {
    return {
      ok: false,
      issues: parsed.error.issues.map((issue) => ({
        file: source,
        path: formatDefinitionPath(issue.path.map((p) => (typeof p === 'number' ? p : String(p)))),
        message: issue.code === 'unrecognized_keys' ? `unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}` : issue.message,
      })),
    };
  }
  const compiler = new WorkflowCompiler(parsed.data, source);
  return compiler.compile();
}

class WorkflowCompiler {
  private readonly issues: WorkflowIssue[] = [];
  private readonly roleIndex = new Map<string, number>();

  constructor(
    private readonly definition: WorkflowDefinition,
    private readonly source: string,
  ) {}

  private report(path: Path, message: string): void {
    this.issues.push({ file: this.source, path: formatDefinitionPath(path), message });
  }

  compile(): WorkflowCheck {
    const def = this.definition;
    this.checkInputSchema();
    def.agents.forEach((agent, index) => {
      if ((RESERVED_ROLES as readonly string[]).includes(agent.role)) this.report(['agents', index, 'role'], `"${agent.role}" is reserved for the runtime's own rows`);
      if (this.roleIndex.has(agent.role)) this.report(['agents', index, 'role'], `duplicate role "${agent.role}" (also agents[${this.roleIndex.get(agent.role)}])`);
      else this.roleIndex.set(agent.role, index);
    });
    const planner = this.checkPlanning();
    def.agents.forEach((agent, index) => this.checkAgentShape(agent, index));
    const graph = this.checkGraph(planner);
    const labels = this.summaryLabels();
    const agents = def.agents.map((agent, index) => this.compileAgent(agent, index, graph.upstream.get(agent.role) ?? new Set(), planner, labels));
    const result = this.compileResult();
    if (this.issues.length > 0) return { ok: false, issues: this.issues };

    const agentsByRole = new Map(agents.map((agent) => [agent.role, agent]));
    return {
      ok: true,
      workflow: {
        type: def.type,
        ...(def.description ? { description: def.description } : {}),
        source: this.source,
        definition: def,
        inputSchema: def.input,
        agents,
        agentsByRole,
        levels: graph.levels,
        result: result!,
        ...(planner ? { planner: agentsByRole.get(planner.role)! } : {}),
      },
    };
  }

  private checkInputSchema(): void {
    const input = this.definition.input;
    if (input.type !== 'object') this.report(['input', 'type'], 'the input schema must be `type: object`');
    const problem = jsonSchemaProblem(input);
    if (problem) this.report(['input'], problem);
  }

  private agentAt(role: string): AgentDefinition | undefined {
    const index = this.roleIndex.get(role);
    return index === undefined ? undefined : this.definition.agents[index];
  }

  /** Goal workflows: one planner (`plan:`), its roles exactly the `planned: true` agents. */
  private checkPlanning(): { role: string; settings: CompiledPlanSettings } | undefined {
    const agents = this.definition.agents;
    const planners = agents.flatMap((agent, index) => (agent.plan ? [{ agent, index }] : []));
    planners.slice(1).forEach(({ index }) => this.report(['agents', index, 'plan'], `only one agent may plan (agents[${planners[0]!.index}] already does)`));
    const first = planners[0];
    agents.forEach((agent, index) => {
      if (!agent.planned) return;
      if (!first) this.report(['agents', index, 'planned'], 'a planned role needs a planner: an agent with plan: {roles: [...]}');
      else if (!first.agent.plan!.roles.includes(agent.role)) this.report(['agents', index, 'planned'], `"${agent.role}" is planned but not in agents[${first.index}].plan.roles`);
      if (agent.after?.length) this.report(['agents', index, 'after'], 'a planned role runs after the planner and its plan dependencies; it cannot list after');
      if (agent.for_each) this.report(['agents', index, 'for_each'], 'a planned role cannot be for_each');
      if (agent.plan) this.report(['agents', index, 'plan'], 'a planned role cannot plan');
    });
    if (!first) return undefined;
    const { agent, index } = first;
    agent.plan!.roles.forEach((role, i) => {
      if (!this.agentAt(role)?.planned) this.report(['agents', index, 'plan', 'roles', i], `"${role}" must be an agent with planned: true`);
    });
    if (agent.steps) this.report(['agents', index, 'steps'], 'a planner makes one call: use prompt, not steps');
    if (agent.output) this.report(['agents', index, 'output'], 'a planner answers with switchyard_plan; it cannot declare output');
    if (agent.for_each) this.report(['agents', index, 'for_each'], 'a planner cannot be for_each');
    return { role: agent.role, settings: { maxSubtasks: agent.plan!.max_subtasks ?? DEFAULT_MAX_SUBTASKS, roles: [...agent.plan!.roles] } };
  }

  private checkAgentShape(agent: AgentDefinition, index: number): void {
    const at = (...rest: Array<string | number>) => ['agents', index, ...rest];
    if (!agent.prompt === !agent.steps) this.report(at(), 'give either prompt or steps (exactly one)');
    const gatherName = agent.gather_step ?? DEFAULT_GATHER_STEP;
    const seen = new Set<string>();
    agent.steps?.forEach((step, i) => {
      if (step.name === gatherName) this.report(at('steps', i, 'name'), `"${step.name}" is the gather step's name`);
      if (seen.has(step.name)) this.report(at('steps', i, 'name'), `duplicate step name "${step.name}"`);
      seen.add(step.name);
      if (step.output) this.checkOutputSchema(step.output, at('steps', i, 'output'));
    });
    if (agent.prompt && agent.gather_step === agent.role) this.report(at('gather_step'), `"${agent.role}" is the call step's name (the role)`);
    if (agent.output) {
      if (agent.steps) this.report(at('output'), 'with steps, declare output on the steps');
      this.checkOutputSchema(agent.output, at('output'));
    }
    if (agent.key && !agent.for_each) this.report(at('key'), 'key labels the tasks of a for_each agent; this agent has no for_each');
    if (agent.for_each) {
      const item = this.forEachItemSchema(agent.for_each, at('for_each'));
      if (item && agent.key) {
        const found = schemaAt(item, [agent.key.from]);
        if (found.error) this.report(at('key', 'from'), `${found.error} (the items of ${agent.for_each})`);
      }
    }
  }

  private checkOutputSchema(schema: JsonSchema, path: Path): void {
    const problem = jsonSchemaProblem(schema);
    if (problem) return this.report(path, problem);
    for (const issue of strictOutputProblems(schema, formatDefinitionPath(path))) this.issues.push({ file: this.source, ...issue });
  }

  /** The items' schema of the input array a for_each names (`logs` or `input.logs.items`). */
  private forEachItemSchema(forEach: string, path: Path): JsonSchema | undefined {
    const segments = forEachPath(forEach);
    const found = schemaAt(this.definition.input, segments);
    if (found.error || found.schema?.type !== 'array') {
      this.report(path, `"${forEach}" is not an array in the input schema${found.error ? `: ${found.error}` : ''}`);
      return undefined;
    }
    return isRecord(found.schema.items) ? found.schema.items : {};
  }

  private checkGraph(planner: { role: string } | undefined): { levels: string[][]; upstream: Map<string, Set<string>> } {
    const agents = this.definition.agents;
    agents.forEach((agent, index) => {
      agent.after?.forEach((role, i) => {
        const target = this.agentAt(role);
        if (role === agent.role) this.report(['agents', index, 'after', i], `"${role}" cannot come after itself`);
        else if (!target) this.report(['agents', index, 'after', i], `unknown role "${role}" (roles: ${[...this.roleIndex.keys()].join(', ')})`);
        else if (target.planned) this.report(['agents', index, 'after', i], `"${role}" is planned; come after the planner "${planner?.role ?? '?'}" instead`);
      });
    });
    const fixed = agents.filter((agent) => !agent.planned);
    const nodes = fixed.map((agent) => ({ id: agent.role, dependsOn: (agent.after ?? []).filter((r) => r !== agent.role && this.roleIndex.has(r)) }));
    const cycle = findCycle(nodes);
    if (cycle) this.report(['agents', this.roleIndex.get(cycle[0]!)!, 'after'], `dependency cycle: ${cycle.join(' → ')}`);
    const upstream = new Map(nodes.map((node) => [node.id, upstreamOf(nodes, node.id)]));
    if (planner) {
      const plannerUpstream = upstream.get(planner.role) ?? new Set<string>();
      for (const agent of agents.filter((a) => a.planned)) upstream.set(agent.role, new Set([planner.role, ...plannerUpstream]));
    }
    return { levels: cycle ? [] : topologicalLevels(nodes), upstream };
  }

  private summaryLabels(): SummaryLabels {
    return Object.fromEntries(
      this.definition.agents.map((agent) => [agent.role, { label: agent.key?.label ?? agent.role, perItem: Boolean(agent.for_each) }]),
    );
  }

  private compileAgent(
    agent: AgentDefinition,
    index: number,
    upstream: Set<string>,
    planner: { role: string; settings: CompiledPlanSettings } | undefined,
    labels: SummaryLabels,
  ): CompiledAgent {
    const meta = stripSensitivity(agent.meta);
    const gather: GatherStep = { kind: 'gather', name: agent.gather_step ?? DEFAULT_GATHER_STEP };
    const scope: TemplateScope = { agent, upstream, afterPlanner: planner !== undefined && upstream.has(planner.role), earlierSteps: [] };
    const isPlanner = planner?.role === agent.role;
    const calls: CallStep[] = [];
    if (agent.prompt) {
      calls.push({
        kind: 'call',
        name: agent.role,
        ...this.compilePrompt(agent.prompt, ['agents', index, 'prompt'], scope, labels),
        meta,
        ...(agent.output ? { output: agent.output } : {}),
        outputName: `${this.definition.type}_${agent.role}`.slice(0, 64),
        ...(isPlanner ? { plan: planner.settings } : {}),
      });
    }
    agent.steps?.forEach((step, i) => {
      calls.push({
        kind: 'call',
        name: step.name,
        ...this.compilePrompt(step.prompt, ['agents', index, 'steps', i, 'prompt'], { ...scope, earlierSteps: agent.steps!.slice(0, i).map((s) => s.name) }, labels),
        meta: { ...meta, ...stripSensitivity(step.meta) },
        ...(step.output ? { output: step.output } : {}),
        outputName: `${this.definition.type}_${agent.role}_${step.name}`.slice(0, 64),
      });
    });
    const key = agent.key ? { from: agent.key.from, as: agent.key.as ?? agent.key.from, label: agent.key.label ?? agent.role } : undefined;
    return {
      role: agent.role,
      ...(agent.description ? { description: agent.description } : {}),
      meta,
      ...(agent.for_each ? { forEach: { path: forEachPath(agent.for_each), ...(key ? { key } : {}) } } : {}),
      after: isPlannedRole(agent) && planner ? [planner.role] : [...(agent.after ?? [])],
      upstream: [...upstream],
      optional: agent.optional ?? false,
      ...(agent.timeout_ms ? { timeoutMs: agent.timeout_ms } : {}),
      planned: isPlannedRole(agent),
      ...(isPlanner ? { plan: planner.settings } : {}),
      steps: [gather, ...calls],
    };
  }

  private compilePrompt(
    prompt: { system?: string; user: string },
    path: Path,
    scope: TemplateScope,
    labels: SummaryLabels,
  ): { system?: CompiledTemplate; user: CompiledTemplate } {
    const compile = (text: string, field: string): CompiledTemplate => {
      const { template, errors } = parseTemplate(text);
      errors.forEach((message) => this.report([...path, field], message));
      for (const { reference, source } of referencesOf(template)) {
        const problem = this.referenceProblem(reference, scope);
        if (problem) this.report([...path, field], `{{${source}}}: ${problem}`);
      }
      template.labels = labels;
      return template;
    };
    return { ...(prompt.system ? { system: compile(prompt.system, 'system') } : {}), user: compile(prompt.user, 'user') };
  }

  private referenceProblem(reference: TemplateReference, scope: TemplateScope): string | null {
    const { agent } = scope;
    switch (reference.kind) {
      case 'input':
        return schemaAt(this.definition.input, reference.path).error ?? null;
      case 'item': {
        if (!agent.for_each) return 'item is only defined in a for_each agent';
        const items = schemaAt(this.definition.input, forEachPath(agent.for_each)).schema?.items;
        return isRecord(items) ? (schemaAt(items, reference.path).error ?? null) : null;
      }
      case 'task':
        return agent.planned ? null : 'task.instruction is only defined in a planned role';
      case 'dependencies':
        return agent.planned ? null : 'dependencies is only defined in a planned role';
      case 'subtasks':
        return scope.afterPlanner && !agent.planned ? null : 'subtasks is only defined in an agent that comes after the planner';
      case 'steps':
        return scope.earlierSteps.includes(reference.step) ? null : `"${reference.step}" is not an earlier step of this agent`;
      case 'outputs':
      case 'summaries': {
        const target = this.agentAt(reference.role);
        if (!target) return `unknown role "${reference.role}"`;
        if (target.planned) return `"${reference.role}" is planned: use {{dependencies}} or {{subtasks}}`;
        if (!scope.upstream.has(reference.role)) return `"${reference.role}" does not come before "${agent.role}" (add it to after)`;
        if (reference.kind === 'summaries') return null;
        if (target.for_each) return `"${reference.role}" has one task per item: use {{summaries.${reference.role}}}`;
        return schemaAt(this.outputSchemaOf(target), reference.path).error ?? null;
      }
    }
  }

  private outputSchemaOf(agent: AgentDefinition): JsonSchema {
    if (agent.plan) return planSchema({ maxSubtasks: 1, roles: agent.plan.roles });
    const last = agent.steps?.at(-1);
    return (last ? last.output : agent.output) ?? SUMMARY_OUTPUT_SCHEMA;
  }

  private compileResult(): ResultSpec | undefined {
    const result = this.definition.result;
    const fixed = this.definition.agents.filter((agent) => !agent.planned);
    if (result === undefined) return { kind: 'role', role: fixed.at(-1)?.role ?? this.definition.agents.at(-1)!.role };
    if (typeof result === 'string') {
      const problem = this.resultRoleProblem(result);
      if (problem) this.report(['result'], problem);
      return { kind: 'role', role: result };
    }
    const entries: Array<{ key: string; reference: ResultReference }> = [];
    for (const [key, text] of Object.entries(result)) {
      const match = /^(outputs|summaries)\.([a-z][a-z0-9_]*)$/.exec(text);
      if (!match) {
        this.report(['result', key], `"${text}" must be outputs.ROLE or summaries.ROLE`);
        continue;
      }
      const reference = { kind: match[1] as 'outputs' | 'summaries', role: match[2]! };
      const problem = this.resultRoleProblem(reference.role);
      if (problem) this.report(['result', key], problem);
      else if (reference.kind === 'outputs' && this.agentAt(reference.role)?.for_each) this.report(['result', key], `"${reference.role}" has one task per item: use summaries.${reference.role}`);
      entries.push({ key, reference });
    }
    return { kind: 'map', entries };
  }

  private resultRoleProblem(role: string): string | null {
    const agent = this.agentAt(role);
    if (!agent) return `unknown role "${role}"`;
    if (agent.planned) return `"${role}" is planned; name the agent that combines the subtasks`;
    return null;
  }
}

interface TemplateScope {
  agent: AgentDefinition;
  upstream: Set<string>;
  afterPlanner: boolean;
  earlierSteps: string[];
}

function isPlannedRole(agent: AgentDefinition): boolean {
  return agent.planned === true;
}

/** `logs`, `input.logs` and `input.incident.logs` all name a path in the input. */
function forEachPath(forEach: string): string[] {
  const segments = forEach.split('.');
  return segments[0] === 'input' ? segments.slice(1) : segments;
}

function stripSensitivity(meta: AgentDefinition['meta']): CallMeta {
  if (!meta) return {};
  const { sensitivity: _sensitivity, ...rest } = meta;
  return rest;
}
