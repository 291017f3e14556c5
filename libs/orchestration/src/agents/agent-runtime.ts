import { z } from 'zod';
import { JobMetaSchema, RequestMetaSchema, type JobMeta, type RequestMeta, type RouteRecord } from '@switchyard/contracts';
import type { TaskOutcomeRow } from '@switchyard/state';
import { looksLikeJsonObject } from '@switchyard/router';
import {
  buildJobResult,
  responseFormat,
  validateOutput,
  validatePlan,
  type CallStep,
  type CompiledAgent,
  type CompiledWorkflow,
  type RenderContext,
  type TaskOutcome,
} from '@switchyard/workflows';
import { modelCallKey } from './model-call-headers';
import type { ChatMessage, ModelCallContext, ModelChatResult, ModelRouter } from './model-router.port';
import { callForSummary, parsedJsonReadings, routesFromAttempts } from './structured-summary';

/**
 * What a task row carries for its agent: the for_each item, its position and key; a planned
 * subtask its instruction (its plan id is the key). Parsed once per task.
 */
export const TaskInputSchema = z.object({
  item: z.unknown().optional(),
  item_index: z.number().int().min(0).optional(),
  item_key: z.string().optional(),
  instruction: z.string().optional(),
});
export type TaskInput = z.infer<typeof TaskInputSchema>;

/** The gather checkpoint: what the templates read from upstream tasks, as it was when the task gathered. */
const TaskOutcomeSchema = z.object({ taskId: z.string(), status: z.string(), output: z.unknown(), key: z.string().optional() });
export const GatheredSchema = z.object({
  outputs: z.record(z.string(), z.unknown()),
  summaries: z.record(z.string(), z.array(TaskOutcomeSchema)),
  /** Goal workflows: a planned subtask's `{{dependencies}}`; an agent after the planner's `{{subtasks}}`. */
  dependencies: z.array(TaskOutcomeSchema).optional(),
  subtasks: z.array(TaskOutcomeSchema).optional(),
});
export type Gathered = z.infer<typeof GatheredSchema>;

/** A call step's checkpoint: the raw reply (kept, never handed upward) and the output read from it. */
export const CallCheckpointSchema = z.object({ raw: z.string(), output: z.unknown() });

/**
 * The gather step: every upstream role's tasks as templates see them — `outputs.ROLE` (the
 * single task's output, when it succeeded) and `summaries.ROLE` (every task, in plan order).
 */
export function gatherUpstream(agent: CompiledAgent, workflow: CompiledWorkflow, upstream: readonly TaskOutcomeRow[], dependsOn: readonly string[] = []): Gathered {
  const outputs: Gathered['outputs'] = {};
  const summaries: Gathered['summaries'] = {};
  for (const role of agent.upstream) {
    const tasks = upstream.filter((task) => task.role === role);
    summaries[role] = tasks.map(toTaskOutcome);
    const single = tasks[0];
    if (!workflow.agentsByRole.get(role)?.forEach && single?.status === 'success') outputs[role] = single.output;
  }
  const planned = plannedRolesOf(workflow);
  const subtasks = upstream.filter((task) => planned.includes(task.role));
  if (agent.planned) return { outputs, summaries, dependencies: subtasks.filter((task) => dependsOn.includes(task.taskId)).map(toTaskOutcome) };
  if (workflow.planner && agent.upstream.includes(workflow.planner.role)) return { outputs, summaries, subtasks: subtasks.map(toTaskOutcome) };
  return { outputs, summaries };
}

/** The roles a goal workflow's planner may give subtasks (none for other workflows). */
export function plannedRolesOf(workflow: CompiledWorkflow): string[] {
  return workflow.planner?.plan?.roles ?? [];
}

/** The roles whose tasks a gather step reads: its upstream, and the planned subtasks when it comes after a planner. */
export function gatherRolesOf(agent: CompiledAgent, workflow: CompiledWorkflow): string[] {
  const afterPlanner = workflow.planner !== undefined && agent.upstream.includes(workflow.planner.role);
  return afterPlanner ? [...new Set([...agent.upstream, ...plannedRolesOf(workflow)])] : agent.upstream;
}

function toTaskOutcome(task: TaskOutcomeRow): TaskOutcome {
  return { taskId: task.taskId, status: task.status, output: task.output, ...(task.key === undefined ? {} : { key: task.key }) };
}

/** The template context of one task: its job's input, its item, what it gathered, its earlier steps' outputs. */
export function renderContext(input: unknown, task: TaskInput, gathered: Gathered, steps: Record<string, unknown>): RenderContext {
  return {
    input,
    ...(task.item === undefined ? {} : { item: task.item }),
    ...(task.instruction === undefined ? {} : { task: { instruction: task.instruction } }),
    outputs: gathered.outputs,
    summaries: gathered.summaries,
    ...(gathered.dependencies ? { dependencies: gathered.dependencies } : {}),
    ...(gathered.subtasks ? { subtasks: gathered.subtasks } : {}),
    steps,
  };
}

/**
 * The request meta of a call: the step's (agent's) meta, and the job's sensitivity, priority,
 * business type and tags — a workflow never sets sensitivity, and a high-priority job makes
 * every call high priority.
 */
export function callMeta(step: CallStep, jobMeta: JobMeta): RequestMeta {
  const meta = step.meta;
  return RequestMetaSchema.parse({
    ...(meta.task_type ? { task_type: meta.task_type } : {}),
    ...(meta.complexity ? { complexity: meta.complexity } : {}),
    sensitivity: jobMeta.sensitivity,
    priority: jobMeta.priority === 'high' ? 'high' : (meta.priority ?? 'normal'),
    tags: [...new Set([...(meta.tags ?? []), ...jobMeta.tags])],
    ...((jobMeta.business_type ?? meta.business_type) ? { business_type: jobMeta.business_type ?? meta.business_type } : {}),
    ...(meta.max_output_tokens ? { max_output_tokens: meta.max_output_tokens } : {}),
    ...(meta.timeout_ms ? { timeout_ms: meta.timeout_ms } : {}),
  });
}

export function parseJobMeta(value: unknown): JobMeta {
  return JobMetaSchema.parse(value ?? {});
}

/** The job result from every task's outcome, as the workflow's `result:` declares it. */
export function jobResultOf(workflow: CompiledWorkflow, outcomes: readonly TaskOutcomeRow[]): unknown {
  const byRole: Record<string, TaskOutcome[]> = {};
  for (const task of outcomes) (byRole[task.role] ??= []).push(toTaskOutcome(task));
  return buildJobResult(workflow, byRole);
}

export interface StepCall {
  step: number;
  headers: Record<string, string>;
  context: ModelCallContext;
  signal: AbortSignal;
}

export interface CallStepResult {
  output: unknown;
  raw: string;
  routes: RouteRecord[];
  costUsd: number;
}

/** A reply that did not match the agent's declared output, from two targets: retrying the task would not help. */
export class BadOutputError extends Error {
  readonly retryable = false;
  constructor(message: string) {
    super(message);
    this.name = 'BadOutputError';
  }
}

/**
 * One call step: the structured summary (JSON mode; a bad reply is retried elsewhere once and
 * then kept as raw text with confidence null), or — when the agent declares `output` — a
 * `response_format: json_schema` call whose reply must match the schema (retried elsewhere
 * once, then the task fails).
 */
export async function runCallStep(router: ModelRouter, step: CallStep, messages: ChatMessage[], meta: RequestMeta, call: StepCall): Promise<CallStepResult> {
  const format = responseFormat(step);
  const maxTokens = meta.max_output_tokens;
  const check = replyCheckOf(step);
  if (!format || !check) {
    const result = await callForSummary(router, { ...call, meta, messages, ...(maxTokens ? { maxTokens } : {}) });
    return { output: result.summary, raw: result.raw, routes: result.routes, costUsd: result.costUsd };
  }
  const ask = (n: number, exclude: string[]) =>
    router.chat({
      meta,
      messages,
      responseFormat: format,
      temperature: 0,
      idempotencyKey: modelCallKey(call.context.taskId, call.context.step, n),
      headers: { ...call.headers, 'x-switchyard-attempt': String(n), 'x-switchyard-idempotency-key': modelCallKey(call.context.taskId, call.context.step, n) },
      context: call.context,
      signal: call.signal,
      ...(exclude.length ? { excludeTargets: exclude } : {}),
      ...(maxTokens ? { maxTokens } : {}),
    });
  const read = (reply: ModelChatResult): ReplyCheck => {
    const value = parseJsonObject(reply.content);
    return value === undefined ? { ok: false, why: 'not a JSON object' } : check(value);
  };
  const what = step.plan ? 'is not a valid plan' : 'does not match the declared output';
  const first = await ask(1, []);
  const routes = routesFromAttempts(call.step, first.attempts);
  const checked = read(first);
  if (checked.ok) return { output: checked.value, raw: first.content, routes, costUsd: first.costUsd };
  markBadOutput(routes, router, first);
  let retry: ModelChatResult;
  try {
    retry = await ask(2, [first.target]);
  } catch (error) {
    if (call.signal.aborted) throw error;
    throw new BadOutputError(`${step.name}: the reply of ${first.target} ${what} (${checked.why}) and no other target could answer`);
  }
  const retryRoutes = routesFromAttempts(call.step, retry.attempts);
  const rechecked = read(retry);
  if (rechecked.ok) return { output: rechecked.value, raw: retry.content, routes: [...routes, ...retryRoutes], costUsd: first.costUsd + retry.costUsd };
  markBadOutput(retryRoutes, router, retry);
  const error = new BadOutputError(`${step.name}: the replies of ${first.target} and ${retry.target} ${step.plan ? 'are not valid plans' : 'do not match the declared output'} (${rechecked.why})`);
  Object.assign(error, { attempts: [...first.attempts, ...retry.attempts] });
  throw error;
}

type ReplyCheck = { ok: true; value: unknown } | { ok: false; why: string };

/**
 * How a structured reply is checked: a planner's against the plan rules (its output is the
 * validated plan), a declared output against its schema; undefined for the default summary.
 */
function replyCheckOf(step: CallStep): ((value: unknown) => ReplyCheck) | undefined {
  const { plan, output } = step;
  if (plan) {
    return (value) => {
      const checked = validatePlan(value, plan);
      return checked.ok ? { ok: true, value: { subtasks: checked.plan.subtasks } } : { ok: false, why: checked.reasons.join('; ') };
    };
  }
  if (!output) return undefined;
  return (value) => {
    const checked = validateOutput(output, value);
    return checked.ok ? { ok: true, value: checked.value } : { ok: false, why: checked.issues.map((i) => `${i.path}: ${i.message}`).join('; ') };
  };
}



function markBadOutput(routes: RouteRecord[], router: ModelRouter, reply: ModelChatResult): void {
  const last = routes.at(-1);
  if (last) last.outcome = 'bad_output';
  // A reply that is not JSON at all the router already counted; a JSON object of the wrong shape
  // only the runtime can tell. A reused answer was judged when it was first paid for.
  if (!reply.reused && looksLikeJsonObject(reply.content)) router.reportBadOutput?.(reply.target);
}

/** The first JSON object in a reply (models wrap JSON in a fence or a sentence), or undefined. */
export function parseJsonObject(content: string): Record<string, unknown> | undefined {
  for (const value of parsedJsonReadings(content)) {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  }
  return undefined;
}
