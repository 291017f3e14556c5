import type { TargetConfig } from '../config/router-config.schema';
import type { TokenUsage } from '../calls/cost';
import type { UpstreamQuotaReport } from '../quota/upstream-quota';

/** A function call the model asked for (OpenAI's `tool_calls` entries). */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** '' for an assistant turn that only calls tools. */
  content: string;
  /** An assistant turn's calls. */
  tool_calls?: ToolCall[];
  /** A `tool` message answers the call with this id. */
  tool_call_id?: string;
  name?: string;
}

/** OpenAI's `response_format`. */
export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema?: Record<string, unknown>; strict?: boolean | null; description?: string } };

/** One finished choice (a request with `n` > 1 has several). */
export interface ProviderChoice {
  index: number;
  content: string;
  toolCalls?: ToolCall[];
  /** The upstream's own `finish_reason` (stop, length, tool_calls, content_filter). */
  finishReason: string;
}

export interface ProviderCall {
  messages: readonly ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  jsonMode?: boolean;
  responseFormat?: ResponseFormat;
  /**
   * OpenAI parameters sent upstream as they are (tools, tool_choice, stop, seed, top_p, …);
   * the router's own fields (model, messages, stream, max_tokens, temperature) win over them.
   */
  upstreamParams?: Readonly<Record<string, unknown>>;
  headers?: Readonly<Record<string, string>>;
  /** Fires on the router's deadline or the caller's abort; the provider must stop on it. */
  signal: AbortSignal;
  timeoutMs: number;
  /** The connection to the upstream is established (the connect stage is over; the headers may come much later). */
  onConnected?: () => void;
  /** The first content token arrived. */
  onFirstToken?: () => void;
  /** Each piece of content as it streams in. */
  onDelta?: (text: string) => void;
  /** Call the upstream without the SDK and hand its stream on as it came (the gateway). */
  passThrough?: PassThrough;
}

/**
 * The gateway's byte pass-through (SPEC §4): the call goes out as the router built it, without
 * the SDK, and the upstream's own stream events are handed on unchanged, read only where the
 * router needs something from them (the first token, usage, errors).
 */
export interface PassThrough {
  /**
   * The upstream's events as SSE text (`data: …\n\n`), from the first token on: what came
   * before it (the role chunk) is held back and handed on with it, so that until then the
   * call can still fail over with nothing sent. Absent: nothing is handed on.
   */
  onEvents?: (sse: string) => void;
  /** Hand on the usage-only chunk at the end too (the client asked for `stream_options.include_usage`). */
  includeUsage: boolean;
  /**
   * Assemble the answer (content, tool calls, choices) as well. Without it the result's
   * `content` is '' and it has no `choices`, unless the upstream reported no usage (the
   * tokens are then counted from the assembled text).
   */
  assemble: boolean;
}

/** OpenAI structured output: the reply must match `schema`. */
export interface JsonSchemaResponseFormat {
  type: 'json_schema';
  json_schema: { name: string; strict: boolean; schema: Record<string, unknown> };
}

export interface ProviderResult {
  content: string;
  model: string;
  /** Absent when the upstream did not report usage. */
  usage?: TokenUsage;
  /** Time from sending the request to the first content token; absent when nothing streamed. */
  firstTokenMs?: number;
  /** Choice 0's `finish_reason`; absent from providers that do not report it. */
  finishReason?: string;
  /** Choice 0's tool calls. */
  toolCalls?: ToolCall[];
  /** Every choice, when the upstream reported them (choice 0 is `content`). */
  choices?: ProviderChoice[];
  /** The upstream's own rate-limit headers, when it sent them. */
  quota?: UpstreamQuotaReport;
}

/** One upstream target speaking some chat protocol. Throws whatever its transport throws. */
export interface ChatProvider {
  readonly target: TargetConfig;
  complete(call: ProviderCall): Promise<ProviderResult>;
  /** Releases connections once the calls in flight are done (the provider was replaced or the router closed). */
  close?(): Promise<void>;
}
