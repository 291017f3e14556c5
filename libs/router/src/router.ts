import type { RequestMeta } from '@switchyard/contracts';
import type { Logger } from '@switchyard/observability';
import { costUsd, type TokenUsage } from './calls/cost';
import { AttemptDeadline } from './calls/deadline';
import { estimateTokens } from './calls/estimate-tokens';
import { CallAbortedError, RouterCallError, type AttemptRecord } from './calls/router-call.error';
import { classifyUpstreamError, UpstreamError } from './calls/upstream-error';
import type { CompiledRouterConfig } from './config/compile-router-config';
import { missingApiKeyFilter, resolveApiKey, type SecretResolver } from './providers/api-key';
import type { ChatMessage, ProviderResult } from './providers/chat-provider';
import { ProviderRegistry, type ProviderFactory } from './providers/provider-registry';
import { contextWindowFilter, sensitiveRequiresLocal, type CandidateFilter } from './routing/candidate-filter';
import { decideRoute, type DecideOptions } from './routing/decide';
import { NoEligibleTargetError } from './routing/no-eligible-target.error';
import type { RoutingDecision } from './routing/routing-decision';
import type { AttemptEvent, CallObserver } from './observe/call-observer';

export interface RouterOptions {
  config: CompiledRouterConfig;
  secrets: SecretResolver;
  logger: Logger;
  /** Run after the built-in filters (missing API key, context window), in order. */
  filters?: readonly CandidateFilter[];
  /** How a target is spoken to; OpenAI-compatible HTTP unless given. */
  providerFactory?: ProviderFactory;
  /** Told of every upstream attempt (cost ledger, metrics). */
  observers?: readonly CallObserver[];
}

export interface ChatCallRequest {
  meta: RequestMeta;
  messages: readonly ChatMessage[];
  /** Defaults to `meta.max_output_tokens`. */
  maxTokens?: number;
  temperature?: number;
  /** Asks for `response_format: {type: 'json_object'}`. */
  jsonMode?: boolean;
  excludeTargets?: ReadonlySet<string> | readonly string[];
  /** Forwarded upstream, e.g. x-switchyard-task, x-switchyard-step, x-switchyard-idempotency-key. */
  headers?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
  /** Who made the call: recorded in the cost ledger, and the job is the retry budget's scope. */
  context?: CallContext;
}

export interface CallContext {
  tenantId?: string;
  jobId?: string;
  taskId?: string;
  step?: number;
  traceId?: string;
}

export interface ChatCallResult {
  content: string;
  target: string;
  model: string;
  rule: string;
  /** `estimated` is true when the upstream reported no usage and the router counted itself. */
  usage: TokenUsage & { estimated: boolean };
  /** Wall time of the whole call, failed attempts included. */
  latencyMs: number;
  costUsd: number;
  attempts: AttemptRecord[];
}

type AttemptOutcome =
  | { ok: true; record: AttemptRecord; result: ProviderResult }
  | { ok: false; record: AttemptRecord; error: UpstreamError }
  | { ok: false; record: AttemptRecord; aborted: unknown };

/**
 * Routes model calls: decides a target per attempt, calls it, classifies failures and
 * fails over to the next eligible target. Plain TypeScript; apps wrap it.
 */
export class Router {
  readonly config: CompiledRouterConfig;
  private readonly secrets: SecretResolver;
  private readonly logger: Logger;
  private readonly filters: readonly CandidateFilter[];
  private readonly providers: ProviderRegistry;
  private readonly observers: readonly CallObserver[];

  constructor(options: RouterOptions) {
    this.config = options.config;
    this.secrets = options.secrets;
    this.logger = options.logger;
    this.filters = [missingApiKeyFilter(options.secrets), contextWindowFilter(), ...(options.filters ?? [])];
    this.providers = new ProviderRegistry(options.providerFactory);
    this.observers = options.observers ?? [];
  }

  /** The decision this router would make now; `options.filters` run after the router's own. */
  decide(meta: RequestMeta, options: DecideOptions = {}): RoutingDecision {
    const filters = options.filters === undefined || options.filters.length === 0 ? this.filters : [...this.filters, ...options.filters];
    return decideRoute(this.config, meta, { excludeTargets: options.excludeTargets, filters });
  }

  /**
   * One model call with failover. Throws `NoEligibleTargetError` when no target may serve it,
   * `RouterCallError` when every attempt failed, `CallAbortedError` when `signal` aborted.
   */
  async chat(request: ChatCallRequest): Promise<ChatCallResult> {
    const started = performance.now();
    const meta: RequestMeta =
      request.meta.estimated_input_tokens === undefined ? { ...request.meta, estimated_input_tokens: estimateTokens(request.messages) } : request.meta;
    // meta.timeout_ms bounds the whole call; each attempt is also bounded by its target's timeout.
    const budgetEnd = meta.timeout_ms === undefined ? Number.POSITIVE_INFINITY : started + meta.timeout_ms;
    const excluded = new Set(request.excludeTargets ?? []);
    const attempts: AttemptRecord[] = [];
    const maxAttempts = this.config.config.max_attempts_per_call;
    let lastError: UpstreamError | undefined;
    let stopReason = `${maxAttempts} attempts allowed per call`;

    while (attempts.length < maxAttempts) {
      if (request.signal?.aborted) throw new CallAbortedError(attempts, { cause: request.signal.reason });
      const remainingMs = budgetEnd - performance.now();
      if (remainingMs < 1) {
        stopReason = `the call's timeout of ${meta.timeout_ms} ms is spent`;
        break;
      }
      let decision: RoutingDecision;
      try {
        decision = this.decide(meta, { excludeTargets: excluded });
      } catch (error) {
        if (error instanceof NoEligibleTargetError && lastError !== undefined) {
          stopReason = 'no other eligible target';
          break;
        }
        throw error;
      }

      const outcome = await this.attempt(decision, meta, request, Math.min(decision.target.timeout_ms, Math.floor(remainingMs)));
      attempts.push(outcome.record);
      this.notify(decision, meta, request, outcome);
      if (outcome.ok) return this.result(outcome.result, outcome.record, decision, meta, attempts, started);
      if ('aborted' in outcome) throw new CallAbortedError(attempts, { cause: outcome.aborted });
      lastError = outcome.error;
      if (!lastError.retryable) {
        stopReason = 'a bad request is not retried';
        break;
      }
      excluded.add(decision.target.name);
    }

    const errorClass = lastError?.errorClass ?? 'timeout';
    throw new RouterCallError(attempts, errorClass, { cause: lastError, reason: stopReason });
  }

  private async attempt(decision: RoutingDecision, meta: RequestMeta, request: ChatCallRequest, timeoutMs: number): Promise<AttemptOutcome> {
    const { target, rule } = decision;
    // decideRoute already enforces this; checking again at the point of egress keeps any
    // future path around the decision (manual force, hedging) from sending sensitive data out.
    if (sensitiveRequiresLocal(target, meta) !== null) {
      throw new Error(`refusing to send a sensitive request to non-local target "${target.name}"`);
    }
    const base = { target: target.name, model: target.model, rule };
    const apiKey = resolveApiKey(target, this.secrets);
    if (apiKey === undefined) {
      const error = new UpstreamError(target.name, 'auth', `environment variable ${target.api_key_env} holds no key`);
      return { ok: false, error, record: { ...base, outcome: 'error', errorClass: 'auth', latencyMs: 0, message: error.message } };
    }

    const provider = this.providers.get(target, apiKey);
    const deadline = new AttemptDeadline(timeoutMs, request.signal);
    const attemptStart = performance.now();
    try {
      const result = await provider.complete({
        messages: request.messages,
        maxTokens: request.maxTokens ?? meta.max_output_tokens,
        temperature: request.temperature,
        jsonMode: request.jsonMode,
        headers: request.headers,
        signal: deadline.signal,
        timeoutMs,
      });
      const latencyMs = elapsed(attemptStart);
      this.logger.debug({ target: target.name, rule, latencyMs }, 'upstream call succeeded');
      return { ok: true, result, record: { ...base, model: result.model, outcome: 'ok', latencyMs } };
    } catch (error) {
      const latencyMs = elapsed(attemptStart);
      if (deadline.callerAborted) {
        return { ok: false, aborted: error, record: { ...base, outcome: 'error', latencyMs, message: 'aborted by the caller' } };
      }
      const { errorClass, status } = classifyUpstreamError(error, { timedOut: deadline.timedOut });
      const reason = deadline.timedOut ? `no answer within ${timeoutMs} ms` : error instanceof Error ? error.message : String(error);
      const upstream = new UpstreamError(target.name, errorClass, reason, status, { cause: error });
      this.logger.warn({ target: target.name, rule, errorClass, status, latencyMs }, 'upstream call failed');
      return { ok: false, error: upstream, record: { ...base, outcome: 'error', errorClass, status, latencyMs, message: reason } };
    } finally {
      deadline.dispose();
    }
  }

  private notify(decision: RoutingDecision, meta: RequestMeta, request: ChatCallRequest, outcome: AttemptOutcome): void {
    if (this.observers.length === 0) return;
    const usage = outcome.ok ? this.usageOf(outcome.result, meta) : undefined;
    const event: AttemptEvent = {
      at: new Date(),
      target: decision.target,
      rule: decision.rule,
      meta,
      context: request.context,
      outcome: outcome.record.outcome,
      ...(outcome.record.errorClass ? { errorClass: outcome.record.errorClass } : {}),
      ...(outcome.record.status !== undefined ? { status: outcome.record.status } : {}),
      ...(usage ? { usage } : {}),
      latencyMs: outcome.record.latencyMs,
      costUsd: usage ? costUsd(decision.target, usage) : 0,
    };
    for (const observer of this.observers) {
      try {
        observer.onAttempt(event);
      } catch (error) {
        this.logger.error({ err: error }, 'call observer failed');
      }
    }
  }

  private usageOf(result: ProviderResult, meta: RequestMeta): TokenUsage & { estimated: boolean } {
    return result.usage
      ? { ...result.usage, estimated: false }
      : { inputTokens: meta.estimated_input_tokens ?? 0, outputTokens: estimateTokens([{ content: result.content }]), estimated: true };
  }

  private result(
    result: ProviderResult,
    record: AttemptRecord,
    decision: RoutingDecision,
    meta: RequestMeta,
    attempts: AttemptRecord[],
    started: number,
  ): ChatCallResult {
    const usage = this.usageOf(result, meta);
    return {
      content: result.content,
      target: decision.target.name,
      model: record.model,
      rule: decision.rule,
      usage,
      latencyMs: elapsed(started),
      costUsd: costUsd(decision.target, usage),
      attempts,
    };
  }
}

function elapsed(since: number): number {
  return Math.round((performance.now() - since) * 10) / 10;
}
