import { z } from 'zod';
import { RequestMetaSchema, SafeString, ValidationError, toFieldIssues, truncateForEcho, type FieldIssue, type RequestMeta } from '@switchyard/contracts';
import { jsonSchemaProblem, resolveModelAlias, type ChatMessage, type InferredMeta, type MetaInference, type ModelAlias, type ResponseFormat } from '@switchyard/router';

/** Text parts of a multi-part message are joined; images and audio are not routed here. */
const ContentSchema = z.union([
  SafeString,
  z.array(z.object({ type: z.literal('text'), text: SafeString })).min(1).transform((parts) => parts.map((part) => part.text).join('')),
]);

const FunctionName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a function name: letters, digits, "_" and "-", at most 64 characters');

const ToolCallSchema = z.object({
  id: SafeString.min(1).max(256),
  type: z.literal('function'),
  function: z.object({ name: FunctionName, arguments: SafeString }),
});

const MessageSchema = z.discriminatedUnion('role', [
  // `developer` is OpenAI's newer name for `system`.
  z.object({ role: z.enum(['system', 'developer', 'user']), content: ContentSchema, name: SafeString.max(256).optional() }),
  z.object({
    role: z.literal('assistant'),
    content: ContentSchema.nullish(),
    tool_calls: z.array(ToolCallSchema).min(1).optional(),
    name: SafeString.max(256).optional(),
    refusal: z.string().nullish(),
  }),
  z.object({ role: z.literal('tool'), content: ContentSchema, tool_call_id: SafeString.min(1).max(256) }),
]);

const JsonSchemaObject = z.record(z.string(), z.unknown());

const ToolSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: FunctionName,
    description: SafeString.optional(),
    parameters: JsonSchemaObject.optional(),
    strict: z.boolean().nullish(),
  }),
});

const ToolChoiceSchema = z.union([z.enum(['none', 'auto', 'required']), z.object({ type: z.literal('function'), function: z.object({ name: FunctionName }) })]);

const ResponseFormatSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    json_schema: z.object({ name: FunctionName, description: SafeString.optional(), schema: JsonSchemaObject.optional(), strict: z.boolean().nullish() }),
  }),
]);

/**
 * The request meta in the body's `metadata`, before defaults (an alias fills what it leaves
 * out). The OpenAI SDK types `metadata` as string values, so numbers and tag lists also
 * arrive as strings and are read here.
 */
const MetadataSchema = z
  .record(SafeString, z.unknown())
  .optional()
  .transform((raw) => {
    if (raw === undefined) return {};
    const out: Record<string, unknown> = { ...raw };
    if (typeof out.tags === 'string') out.tags = out.tags.split(',').map((tag) => tag.trim()).filter((tag) => tag.length > 0);
    for (const key of ['timeout_ms', 'max_output_tokens', 'estimated_input_tokens']) {
      if (typeof out[key] === 'string' && /^\d+$/.test(out[key])) out[key] = Number(out[key]);
    }
    return out;
  });

/**
 * An OpenAI chat-completions request. The parameters below are checked and passed upstream;
 * any other top-level field is passed upstream as it is (the upstream accepts or refuses it),
 * never dropped. `metadata` is Switchyard's and never leaves.
 */
export const ChatCompletionRequestSchema = z.looseObject({
  model: SafeString.max(200).optional(),
  messages: z.array(MessageSchema).min(1, 'at least one message is required'),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().min(1).optional(),
  max_completion_tokens: z.number().int().min(1).optional(),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  response_format: ResponseFormatSchema.optional(),
  tools: z.array(ToolSchema).max(128).optional(),
  tool_choice: ToolChoiceSchema.optional(),
  parallel_tool_calls: z.boolean().optional(),
  stop: z.union([SafeString, z.array(SafeString).min(1).max(4)]).nullish(),
  seed: z.number().int().optional(),
  top_p: z.number().min(0).max(1).optional(),
  presence_penalty: z.number().min(-2).max(2).optional(),
  frequency_penalty: z.number().min(-2).max(2).optional(),
  logit_bias: z.record(z.string().regex(/^\d+$/, 'a token id'), z.number().min(-100).max(100)).optional(),
  n: z.number().int().min(1).optional(),
  user: SafeString.max(256).optional(),
  metadata: MetadataSchema,
});

export type ChatCompletionRequest = z.output<typeof ChatCompletionRequestSchema>;

/** Fields the gateway itself reads; everything else in the body goes upstream as it came. */
const GATEWAY_FIELDS = new Set(['model', 'messages', 'temperature', 'max_tokens', 'max_completion_tokens', 'stream', 'stream_options', 'response_format', 'metadata']);

export interface ParsedChatRequest {
  body: ChatCompletionRequest;
  /** The conversation as the router takes it. */
  messages: ChatMessage[];
  meta: RequestMeta;
  /** The alias `model` named, if any. */
  alias: string | undefined;
  maxTokens: number | undefined;
  responseFormat: ResponseFormat | undefined;
  /** OpenAI parameters passed upstream as they are (tools, tool_choice, stop, seed, n, user, unknown fields, …). */
  upstreamParams: Record<string, unknown>;
  n: number;
  /** `metadata.session_id`: the conversation whose history the gateway keeps. */
  sessionId?: string;
  /** Meta the classifier filled in (or guessed under its threshold), when the request left it out. */
  inferred?: InferredMeta;
}

export interface ChatRequestLimits {
  aliases: Readonly<Record<string, ModelAlias>>;
  maxN: number;
  /** Fills in `task_type` / `complexity` the request and its alias leave out (see `Router.inferMeta`). */
  inferMeta?: (given: Readonly<Record<string, unknown>>, messages: readonly ChatMessage[]) => MetaInference | undefined;
}

/** `metadata.session_id`: the client's name for a conversation (hashed before it is used as a key). */
const SessionIdSchema = SafeString.min(1).max(256);

/** The model the request names is neither `auto` nor an alias: OpenAI's 404 `model_not_found`. */
export class UnknownModelError extends Error {
  constructor(readonly model: string) {
    super(`The model \`${truncateForEcho(model, 64)}\` does not exist; GET /v1/models lists the models (auto and the aliases)`);
    this.name = 'UnknownModelError';
  }
}

export function parseChatCompletionRequest(body: unknown, limits: ChatRequestLimits = { aliases: {}, maxN: 1 }): ParsedChatRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ValidationError([{ path: '(body)', message: 'expected a JSON object with `messages`' }]);
  }
  const parsed = ChatCompletionRequestSchema.safeParse(body);
  if (!parsed.success) throw new ValidationError(toFieldIssues(parsed.error));
  const data = parsed.data;
  const issues = [...toolIssues(data), ...nIssues(data, limits.maxN), ...responseFormatIssues(data)];
  if (issues.length > 0) throw new ValidationError(issues);

  const { session_id: rawSessionId, ...metadata } = data.metadata;
  const sessionId = rawSessionId === undefined ? undefined : SessionIdSchema.safeParse(rawSessionId);
  if (sessionId !== undefined && !sessionId.success) throw new ValidationError(toFieldIssues(sessionId.error, 'metadata.session_id'));
  const resolved = resolveModelAlias(data.model, limits.aliases, metadata);
  if (!resolved.ok) throw new UnknownModelError(resolved.model);
  const messages = data.messages.map(toRouterMessage);
  const inference = limits.inferMeta?.(resolved.meta, messages);
  const meta = RequestMetaSchema.safeParse({ ...resolved.meta, ...inference?.fields });
  if (!meta.success) throw new ValidationError(toFieldIssues(meta.error, 'metadata'));

  const upstreamParams: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) if (!GATEWAY_FIELDS.has(key) && value !== undefined) upstreamParams[key] = value;
  const maxTokens = data.max_completion_tokens ?? data.max_tokens ?? meta.data.max_output_tokens;
  return {
    body: data,
    messages,
    meta: meta.data,
    alias: resolved.alias,
    maxTokens,
    responseFormat: data.response_format as ResponseFormat | undefined,
    upstreamParams,
    n: data.n ?? 1,
    ...(sessionId === undefined ? {} : { sessionId: sessionId.data }),
    ...(inference === undefined ? {} : { inferred: inference.inferred }),
  };
}

function toRouterMessage(message: ChatCompletionRequest['messages'][number]): ChatMessage {
  switch (message.role) {
    case 'assistant':
      return { role: 'assistant', content: message.content ?? '', ...(message.tool_calls ? { tool_calls: message.tool_calls } : {}), ...(message.name ? { name: message.name } : {}) };
    case 'tool':
      return { role: 'tool', content: message.content, tool_call_id: message.tool_call_id };
    default:
      return { role: message.role === 'developer' ? 'system' : message.role, content: message.content, ...(message.name ? { name: message.name } : {}) };
  }
}

/** A tool message answers a call an earlier assistant turn made; a named tool_choice names an offered tool; parameters are JSON Schema. */
function toolIssues(data: ChatCompletionRequest): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const called = new Set<string>();
  data.messages.forEach((message, index) => {
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) called.add(call.id);
    if (message.role === 'tool' && !called.has(message.tool_call_id)) {
      issues.push({ path: `messages.${index}.tool_call_id`, message: 'answers no tool call of an earlier assistant message' });
    }
  });
  const names = new Set<string>();
  data.tools?.forEach((tool, index) => {
    if (names.has(tool.function.name)) issues.push({ path: `tools.${index}.function.name`, message: `tool "${tool.function.name}" is defined twice` });
    names.add(tool.function.name);
    if (tool.function.parameters !== undefined) {
      const problem = jsonSchemaProblem(tool.function.parameters);
      if (problem !== null) issues.push({ path: `tools.${index}.function.parameters`, message: problem });
    }
  });
  const choice = data.tool_choice;
  if (typeof choice === 'object' && !names.has(choice.function.name)) {
    issues.push({ path: 'tool_choice.function.name', message: `names no tool in \`tools\`` });
  }
  if (choice !== undefined && choice !== 'none' && names.size === 0) issues.push({ path: 'tool_choice', message: 'needs `tools`' });
  return issues;
}

function nIssues(data: ChatCompletionRequest, maxN: number): FieldIssue[] {
  return data.n !== undefined && data.n > maxN ? [{ path: 'n', message: `at most ${maxN} choices per request` }] : [];
}

function responseFormatIssues(data: ChatCompletionRequest): FieldIssue[] {
  const format = data.response_format;
  if (format?.type !== 'json_schema' || format.json_schema.schema === undefined) return [];
  const problem = jsonSchemaProblem(format.json_schema.schema);
  return problem === null ? [] : [{ path: 'response_format.json_schema.schema', message: problem }];
}
