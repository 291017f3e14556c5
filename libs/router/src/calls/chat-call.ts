import type { RequestMeta } from '@switchyard/contracts';
import type { AttemptRecorder } from '../observe/call-observer';
import type { ChatMessage, PassThrough, ProviderChoice, ProviderResult, ResponseFormat, ToolCall } from '../providers/chat-provider';
import type { TokenUsage } from './cost';
import type { AttemptRecord } from './router-call.error';
import type { UpstreamError } from './upstream-error';

/** One model call as a caller asks for it, and what it gets back. */
export interface ChatCallRequest {
  meta: RequestMeta;
  messages: readonly ChatMessage[];
  /** Defaults to `meta.max_output_tokens`. */
  maxTokens?: number;
  temperature?: number;
  /** Asks for `response_format: {type: 'json_object'}`; a reply that is not a JSON object counts as bad output. */
  jsonMode?: boolean;
  /**
   * OpenAI's `response_format`. A `json_schema` reply that is not JSON the schema accepts is
   * bad output of that target and the call moves on to the next one (its content is held
   * back from `onDelta` until it passed).
   */
  responseFormat?: ResponseFormat;
  /** OpenAI parameters passed upstream as they are (tools, tool_choice, stop, seed, top_p, n, user, …). */
  upstreamParams?: Readonly<Record<string, unknown>>;
  /**
   * The gateway's pass-through (`PassThrough`): each attempt goes out without the SDK, and once
   * the upstream's events are handed on the same no-failover rule as `onDelta` holds.
   * `restrictedBy`: why the per-call filters held targets back so far (as in the result), for a
   * caller that must say so before its first byte. A `json_schema` answer is handed on only
   * once it passed its schema.
   */
  passThrough?: CallPassThrough;
  excludeTargets?: ReadonlySet<string> | readonly string[];
  /** Forwarded upstream, e.g. x-switchyard-task, x-switchyard-step, x-switchyard-idempotency-key. */
  headers?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
  /** Who made the call: recorded in the cost ledger, and the job is the retry budget's scope. */
  context?: CallContext;
  /**
   * Each piece of content as it streams. Once a piece has been handed out the call can no
   * longer fail over (the caller has part of an answer), so a later failure ends the call.
   */
  onDelta?: (text: string, target: string) => void;
  /** Records this call's attempts durably; its attempts are flagged `recordedByCaller` to the observers. */
  attemptRecorder?: AttemptRecorder;
  /** How long to wait for a slot when every candidate is full fleet-wide; `fleet_limits.slot_wait_ms` unless given. */
  slotWaitMs?: number;
}

export interface CallPassThrough extends Omit<PassThrough, 'onEvents'> {
  onEvents?: (sse: string, target: string, restrictedBy?: readonly string[]) => void;
}

export interface CallContext {
  tenantId?: string;
  jobId?: string;
  taskId?: string;
  step?: number;
  traceId?: string;
  /** Tasks in the job: its retry budget grows with them (`retry_budget_per_task`). */
  jobTaskCount?: number;
  /** Keeps a weighted split on one target for every call with this key; the job id when absent. */
  stickyKey?: string;
}

export interface ChatCallResult {
  content: string;
  /** The upstream's `finish_reason` of choice 0 (`stop` when it reported none). */
  finishReason: string;
  toolCalls?: ToolCall[];
  /** Every choice (one unless `n` asked for more). */
  choices: ProviderChoice[];
  target: string;
  model: string;
  rule: string;
  /** `estimated` is true when the upstream reported no usage and the router counted itself. */
  usage: TokenUsage & { estimated: boolean };
  /** Wall time of the whole call, failed attempts included. */
  latencyMs: number;
  costUsd: number;
  attempts: AttemptRecord[];
  /** Why the per-call filters (`contextFilters`) held targets back, e.g. `daily_budget_spent`. */
  restrictedBy?: string[];
  /** The answer came from an identical call's upstream attempt in flight at the same time (coalescing). */
  coalesced?: boolean;
}

export type AttemptOutcome =
  | { ok: true; record: AttemptRecord; result: ProviderResult; badOutput: boolean }
  | { ok: false; record: AttemptRecord; error: UpstreamError; streamed: boolean; retryAfterMs?: number; coldStart?: boolean }
  | { ok: false; record: AttemptRecord; aborted: unknown };
