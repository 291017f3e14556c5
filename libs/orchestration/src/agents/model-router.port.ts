import type { RequestMeta } from '@switchyard/contracts';
import type { AttemptRecorder, JsonSchemaResponseFormat } from '@switchyard/router';

/**
 * What agents need from the router. Declared here (the consumer) so that orchestration
 * depends on a small port, and tests can drive agents with an in-memory upstream.
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ModelChatRequest {
  meta: RequestMeta;
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  jsonMode?: boolean;
  /** Structured output: the reply must match the schema (`response_format: json_schema`). */
  responseFormat?: JsonSchemaResponseFormat;
  excludeTargets?: string[];
  headers?: Record<string, string>;
  /**
   * (task, step, call of the step): an answer already obtained for this key is reused instead
   * of paying for the call again (see IdempotentModelRouter). Not the task's retry count.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
  context?: ModelCallContext;
  /** Records the call's upstream attempts durably (see IdempotentModelRouter). */
  attemptRecorder?: AttemptRecorder;
}

/** Who made a call: the cost ledger records it, and the job scopes the retry budget. */
export interface ModelCallContext {
  tenantId: string;
  jobId: string;
  taskId: string;
  step: number;
  traceId?: string;
  /** Tasks in the job: the job's retry budget grows with them. Set by the task runner. */
  jobTaskCount?: number;
  /**
   * The call is made under the task's first lease (lease version 1): no earlier run of the task
   * can have stored an answer under its keys, so the paid-once lookup is skipped. Every later
   * run (a resumption, a retry, a presumed-dead worker's successor) holds a higher version and
   * looks. Set by the task runner.
   */
  firstLease?: boolean;
}

export interface ModelAttempt {
  target: string;
  model: string;
  rule: string;
  outcome: 'ok' | 'error';
  errorClass?: string;
  latencyMs: number;
  message?: string;
}

export interface ModelChatResult {
  content: string;
  target: string;
  model: string;
  rule: string;
  usage: { inputTokens: number; outputTokens: number };
  latencyMs: number;
  costUsd: number;
  attempts: ModelAttempt[];
  /** The answer came from the paid-once store, not from a new upstream call. */
  reused?: boolean;
}

export interface ModelRouter {
  chat(request: ModelChatRequest): Promise<ModelChatResult>;
  /** A reply that was JSON but not the summary asked for: counts against the target's health. */
  reportBadOutput?(target: string): void;
}
