import type { FieldIssue } from '@switchyard/contracts';
import type { JsonSchema } from './json-schema';
import type { CompiledTemplate } from './template';
import type { AgentMeta, WorkflowDefinition } from './workflow-definition';

/** A problem in a workflow definition: which file, which path in it, what is wrong. */
export interface WorkflowIssue {
  file: string;
  path: string;
  message: string;
  /** 1-based line in the YAML file, when known. */
  line?: number;
}

export class WorkflowDefinitionError extends Error {
  constructor(
    readonly issues: WorkflowIssue[],
    options?: ErrorOptions,
  ) {
    super(issues.map(formatWorkflowIssue).join('\n'), options);
    this.name = 'WorkflowDefinitionError';
  }
}

export function formatWorkflowIssue(issue: WorkflowIssue): string {
  return `${issue.file}${issue.line ? `:${issue.line}` : ''}: ${issue.path}: ${issue.message}`;
}

export type CallMeta = Omit<AgentMeta, 'sensitivity'>;

export interface GatherStep {
  kind: 'gather';
  name: string;
}

export interface CallStep {
  kind: 'call';
  name: string;
  system?: CompiledTemplate;
  user: CompiledTemplate;
  /** The agent's meta with the step's own meta over it. */
  meta: CallMeta;
  /** A declared JSON Schema; absent means the structured summary (or the plan, for a planner). */
  output?: JsonSchema;
  /** `json_schema` response_format name for `output`: `<type>_<role>[_<step>]`. */
  outputName: string;
  /** Set on a planner's call: the reply must be a `switchyard_plan`. */
  plan?: CompiledPlanSettings;
}

export type RuntimeStep = GatherStep | CallStep;

export interface CompiledPlanSettings {
  maxSubtasks: number;
  roles: string[];
}

export interface CompiledItemKey {
  from: string;
  as: string;
  label: string;
}

export interface CompiledAgent {
  role: string;
  description?: string;
  meta: CallMeta;
  /** One task per item of the input array at this path (`['documents']`). */
  forEach?: { path: string[]; key?: CompiledItemKey };
  /** Roles that must be done first; a for_each role means every one of its tasks. */
  after: string[];
  /** Every role this one depends on, transitively (a planned role: the planner and its upstream). */
  upstream: string[];
  optional: boolean;
  timeoutMs?: number;
  /** Runs only as subtasks of a plan, each with its `instruction`. */
  planned: boolean;
  plan?: CompiledPlanSettings;
  /** The checkpointed steps the runtime runs: gather, then one or more calls. */
  steps: [GatherStep, ...CallStep[]];
}

export type ResultReference = { kind: 'outputs'; role: string } | { kind: 'summaries'; role: string };

export type ResultSpec = { kind: 'role'; role: string } | { kind: 'map'; entries: Array<{ key: string; reference: ResultReference }> };

export interface CompiledWorkflow {
  type: string;
  description?: string;
  /** The file (or the name given for a TypeScript definition) it came from. */
  source: string;
  definition: WorkflowDefinition;
  inputSchema: JsonSchema;
  /** In file order. Planned roles are included; they are not in `levels`. */
  agents: CompiledAgent[];
  agentsByRole: ReadonlyMap<string, CompiledAgent>;
  /** The fixed (non-planned) roles in dependency levels: level 0 has no `after`. */
  levels: string[][];
  result: ResultSpec;
  /** The agent with `plan:` in a goal workflow. */
  planner?: CompiledAgent;
}

export type { FieldIssue };
