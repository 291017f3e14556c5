import type { RequestMeta } from '@switchyard/contracts';
import type { Logger } from '@switchyard/observability';
import { parseRetryAfterMs } from '../backoff/backoff';
import type { Clock } from '../clock';
import type { NetworkSelfCheck } from '../health/network-self-check';
import type { CompiledRouterConfig } from '../config/compile-router-config';
import type { TargetConfig } from '../config/router-config.schema';
import type { SlotResult, TargetLimiter } from '../fleet/target-limiter';
import type { AttemptEvent, CallObserver, RetryBudgetExhaustedEvent } from '../observe/call-observer';
import { resolveApiKey, type SecretResolver } from '../providers/api-key';
import type { ProviderResult } from '../providers/chat-provider';
import type { ProviderRegistry } from '../providers/provider-registry';
import { sensitiveRequiresLocal } from '../routing/candidate-filter';
import type { RoutingDecision } from '../routing/routing-decision';
import type { TargetStateRegistry } from '../state/target-state';
import { attemptTotalMs, StagedDeadline } from '../timing/staged-deadline';
import { looksLikeJsonObject } from './bad-output';
import type { AttemptOutcome, CallContext, ChatCallRequest, ChatCallResult } from './chat-call';
import { costUsd, type TokenUsage } from './cost';
import { countTextTokens } from './estimate-tokens';
import type { AttemptRecord } from './router-call.error';
import { matchesJsonSchema } from './structured-output';
import { readUpstreamQuota, type UpstreamQuotaReport } from '../quota/upstream-quota';
import { classifyUpstreamError, errorQuotaHeaders, isModelLoading, retryAfterHeader, UpstreamError } from './upstream-error';

export interface AttemptExecutorOptions {
  config: () => CompiledRouterConfig;
  states: TargetStateRegistry;
  providers: ProviderRegistry;
  secrets: SecretResolver;
  observers: readonly CallObserver[];
  limiter: TargetLimiter | undefined;
  logger: Logger;
  clock: Clock;
  /** Holds connect failures while "is it me or them" is decided. */
  selfCheck: NetworkSelfCheck;
}

/**
 * One upstream attempt, start to end: the fleet slot, the provider call under its three-stage
 * deadline, the target's state (in flight, health, breaker), the classification of a failure,
 * bad output, and telling the attempt recorder and the observers.
 */
export class AttemptExecutor {
  private readonly config: () => CompiledRouterConfig;
  private readonly states: TargetStateRegistry;
  private readonly providers: ProviderRegistry;
  private readonly secrets: SecretResolver;
  private readonly observers: readonly CallObserver[];
  private readonly limiter: TargetLimiter | undefined;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly selfCheck: NetworkSelfCheck;

  constructor(options: AttemptExecutorOptions) {
    this.selfCheck = options.selfCheck;
    this.config = options.config;
    this.states = options.states;
    this.providers = options.providers;
    this.secrets = options.secrets;
    this.observers = options.observers;
    this.limiter = options.limiter;
    this.logger = options.logger;
    this.clock = options.clock;
  }

  /** Whether a fleet-wide limiter counts the slots (else this process's state alone does). */
  get fleetWide(): boolean {
    return this.limiter !== undefined;
  }

  /** Closes the upstream connection pools (calls in flight finish first) and hands back fleet slots. */
  async close(): Promise<void> {
    await Promise.all([this.providers.closeAll(), this.limiter?.close()]);
  }

  /** A fleet-wide slot on the target for one attempt; undefined when limits are this process's own. */
  async acquireSlot(target: TargetConfig, meta: RequestMeta, request: ChatCallRequest): Promise<SlotResult | undefined> {
    if (this.limiter === undefined || !this.config().config.fleet_limits.enabled) return undefined;
    const tokens = (meta.estimated_input_tokens ?? 0) + (request.maxTokens ?? meta.max_output_tokens ?? 0);
    return this.limiter.acquire(target, tokens);
  }

  /** `onFirstToken`: told when the first content token arrives (a hedged attempt's race listens for it). */
  async run(
    decision: RoutingDecision,
    meta: RequestMeta,
    request: ChatCallRequest,
    remainingMs: number,
    attempt: number,
    onFirstToken?: () => void,
  ): Promise<AttemptOutcome> {
    const { target, rule } = decision;
    // decideRoute already enforces this; checking again at the point of egress keeps any
    // path around the decision (manual force, hedging) from sending sensitive data out.
    if (sensitiveRequiresLocal(target, meta) !== null) {
      throw new Error(`refusing to send a sensitive request to non-local target "${target.name}"`);
    }
    const base = { target: target.name, model: target.model, rule };
    const apiKey = resolveApiKey(target, this.secrets);
    if (apiKey === undefined) {
      const error = new UpstreamError(target.name, 'auth', `environment variable ${target.api_key_env} holds no key`);
      return { ok: false, error, streamed: false, record: { ...base, outcome: 'error', errorClass: 'auth', latencyMs: 0, message: error.message } };
    }

    const state = this.states.get(target.name)!;
    const maxTokens = request.maxTokens ?? meta.max_output_tokens;
    const totalMs = attemptTotalMs(target, maxTokens, remainingMs, null);
    const deadline = new StagedDeadline(
      { connectMs: this.config().config.timeouts.connect_ms, firstTokenMs: target.first_token_timeout_ms, totalMs },
      request.signal,
    );
    const provider = this.providers.get(target, apiKey);
    if (request.attemptRecorder) {
      const estimatedInputTokens = meta.estimated_input_tokens ?? 0;
      await request.attemptRecorder.started({
        at: new Date(),
        attempt,
        target,
        rule,
        meta,
        context: request.context,
        estimatedInputTokens,
        estimatedInputCostUsd: costUsd(target, { inputTokens: estimatedInputTokens, outputTokens: 0 }),
      });
    }
    state.begin(this.clock.now(), (meta.estimated_input_tokens ?? 0) + (maxTokens ?? 0));
    // A json_schema answer is held back until it passed its schema, so a failed one can still fail over.
    const holdBack = request.responseFormat?.type === 'json_schema';
    const held: string[] = [];
    const onDelta = holdBack ? undefined : request.onDelta;
    const passThrough = request.passThrough;
    const onEvents = passThrough?.onEvents;
    let streamed = false;
    const attemptStart = performance.now();
    try {
      const result = await provider.complete({
        messages: request.messages,
        maxTokens,
        temperature: request.temperature,
        jsonMode: request.jsonMode,
        ...(request.responseFormat === undefined ? {} : { responseFormat: request.responseFormat }),
        ...(request.upstreamParams === undefined ? {} : { upstreamParams: request.upstreamParams }),
        headers: request.headers,
        signal: deadline.signal,
        timeoutMs: totalMs,
        onConnected: () => deadline.connected(),
        onFirstToken:
          onFirstToken === undefined
            ? () => deadline.firstToken()
            : () => {
                deadline.firstToken();
                onFirstToken();
              },
        ...(onDelta === undefined
          ? {}
          : {
              onDelta: (text: string) => {
                streamed = true;
                onDelta(text, target.name);
              },
            }),
        ...(passThrough === undefined
          ? {}
          : {
              passThrough: {
                includeUsage: passThrough.includeUsage,
                // The answer is judged against the format it asked for.
                assemble: passThrough.assemble || request.jsonMode === true || (request.responseFormat !== undefined && request.responseFormat.type !== 'text'),
                ...(onEvents === undefined
                  ? {}
                  : {
                      onEvents: (sse: string) => {
                        if (holdBack) {
                          held.push(sse);
                          return;
                        }
                        streamed = true;
                        onEvents(sse, target.name);
                      },
                    }),
              },
            }),
      });
      const latencyMs = elapsed(attemptStart);
      const badOutput = this.isBadOutput(request, result);
      if (holdBack && !badOutput) {
        for (const sse of held) onEvents?.(sse, target.name);
        if (result.content !== '') request.onDelta?.(result.content, target.name);
      }
      if (result.quota !== undefined) this.noteUpstreamQuota(target, result.quota);
      this.selfCheck.success();
      const outputTokens = result.usage?.outputTokens ?? countTextTokens(result.content);
      state.end(this.clock.now(), {
        ok: !badOutput,
        ...(badOutput ? { failure: 'bad_output' as const } : {}),
        latencyMs,
        outputTokens,
        ...(result.firstTokenMs === undefined ? {} : { firstTokenMs: result.firstTokenMs }),
      });
      if (badOutput) this.logger.warn({ target: target.name, rule, latencyMs }, 'upstream answered, but not with the JSON asked for (bad output)');
      else this.logger.debug({ target: target.name, rule, latencyMs }, 'upstream call succeeded');
      return {
        ok: true,
        result,
        badOutput,
        record: { ...base, model: result.model, outcome: 'ok', latencyMs, ...(result.firstTokenMs === undefined ? {} : { firstTokenMs: result.firstTokenMs }) },
      };
    } catch (error) {
      const latencyMs = elapsed(attemptStart);
      if (deadline.callerAborted) {
        state.release();
        return { ok: false, aborted: error, record: { ...base, outcome: 'error', latencyMs, message: 'aborted by the caller' } };
      }
      const { errorClass, status } = classifyUpstreamError(error, { timedOut: deadline.timedOut });
      // A model still loading is a cold start, not a failure (SPEC §3.8).
      const coldStart = isModelLoading(status, describe(error));
      const stage = deadline.timedOutStage;
      const reason = coldStart
        ? `the model is still loading (${status}): ${describe(error)}`
        : stage !== undefined
          ? `no ${stage === 'connect' ? 'connection' : stage === 'first_token' ? 'first token' : 'complete answer'} within ${deadline.limitOf(stage)} ms`
          : describe(error);
      const retryAfterMs = errorClass === 'rate_limited' ? parseRetryAfterMs(retryAfterHeader(error), Date.now()) : undefined;
      const quotaHeaders = status === undefined ? undefined : errorQuotaHeaders(error);
      const quota = quotaHeaders === undefined ? undefined : readUpstreamQuota(quotaHeaders);
      if (quota !== undefined) this.noteUpstreamQuota(target, quota);
      const observation = { ok: false, failure: errorClass, latencyMs, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
      if (coldStart) state.endColdStart();
      else if (errorClass === 'network' || stage === 'connect') {
        // Could be our own network: charged once "is it me or them" says it was the target.
        state.release();
        const at = this.clock.now();
        this.selfCheck.connectFailure(target.name, () => state.observe(at, observation));
      } else {
        if (status !== undefined) this.selfCheck.success();
        state.end(this.clock.now(), observation);
      }
      const upstream = new UpstreamError(target.name, errorClass, reason, status, { cause: error });
      this.logger.warn({ target: target.name, rule, errorClass, status, latencyMs, stage }, coldStart ? 'upstream is still loading its model; moving on' : 'upstream call failed');
      return {
        ok: false,
        error: upstream,
        streamed,
        ...(coldStart ? { coldStart } : {}),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        record: { ...base, outcome: 'error', errorClass, status, latencyMs, message: reason },
      };
    } finally {
      deadline.dispose();
    }
  }

  notify(decision: RoutingDecision, meta: RequestMeta, request: ChatCallRequest, outcome: AttemptOutcome, attempt: number): void {
    const recorder = request.attemptRecorder;
    if (this.observers.length === 0 && recorder === undefined) return;
    const usage = outcome.ok ? this.usageOf(outcome.result, meta) : undefined;
    const firstTokenMs = outcome.ok ? outcome.result.firstTokenMs : undefined;
    const event: AttemptEvent = {
      at: new Date(),
      target: decision.target,
      rule: decision.rule,
      meta,
      context: request.context,
      outcome: outcome.ok && outcome.badOutput ? 'bad_output' : outcome.record.outcome,
      ...(outcome.record.errorClass ? { errorClass: outcome.record.errorClass } : {}),
      ...(outcome.record.status !== undefined ? { status: outcome.record.status } : {}),
      ...(usage ? { usage } : {}),
      latencyMs: outcome.record.latencyMs,
      ...(firstTokenMs === undefined ? {} : { firstTokenMs }),
      costUsd: usage ? costUsd(decision.target, usage) : 0,
      attempt,
      ...(recorder ? { recordedByCaller: true } : {}),
    };
    if (recorder) {
      try {
        recorder.finished(event);
      } catch (error) {
        this.logger.error({ err: error }, 'attempt recorder failed');
      }
    }
    for (const observer of this.observers) {
      try {
        observer.onAttempt(event);
      } catch (error) {
        this.logger.error({ err: error }, 'call observer failed');
      }
    }
  }

  /** The upstream's rate-limit headers: this process's view of the target, and the fleet's. */
  private noteUpstreamQuota(target: TargetConfig, report: UpstreamQuotaReport): void {
    this.states.get(target.name)?.applyUpstreamQuota(this.clock.now(), report);
    if (this.config().config.fleet_limits.enabled) this.limiter?.noteUpstreamQuota?.(target, report);
  }

  notifyRetryBudgetExhausted(context: CallContext | undefined, limit: number): void {
    const event: RetryBudgetExhaustedEvent = { at: new Date(), context, limit };
    for (const observer of this.observers) {
      try {
        observer.onRetryBudgetExhausted?.(event);
      } catch (error) {
        this.logger.error({ err: error }, 'call observer failed');
      }
    }
  }

  /** A reply that is not what the response format asked for (tool calls are judged by the caller). */
  private isBadOutput(request: ChatCallRequest, result: ProviderResult): boolean {
    if (result.toolCalls !== undefined && result.toolCalls.length > 0) return false;
    const format = request.responseFormat;
    if (format?.type === 'json_schema') return !matchesJsonSchema(result.content, format.json_schema.schema);
    if (request.jsonMode === true || format?.type === 'json_object') return !looksLikeJsonObject(result.content);
    return false;
  }

  private usageOf(result: ProviderResult, meta: RequestMeta): TokenUsage & { estimated: boolean } {
    return result.usage
      ? { ...result.usage, estimated: false }
      : { inputTokens: meta.estimated_input_tokens ?? 0, outputTokens: countTextTokens(result.content), estimated: true };
  }

  result(
    result: ProviderResult,
    record: AttemptRecord,
    decision: RoutingDecision,
    meta: RequestMeta,
    attempts: AttemptRecord[],
    started: number,
    restrictions: ReadonlySet<string>,
  ): ChatCallResult {
    const usage = this.usageOf(result, meta);
    const finishReason = result.finishReason ?? 'stop';
    return {
      content: result.content,
      finishReason,
      ...(result.toolCalls === undefined ? {} : { toolCalls: result.toolCalls }),
      choices: result.choices ?? [{ index: 0, content: result.content, ...(result.toolCalls === undefined ? {} : { toolCalls: result.toolCalls }), finishReason }],
      target: decision.target.name,
      model: record.model,
      rule: decision.rule,
      usage,
      latencyMs: elapsed(started),
      costUsd: costUsd(decision.target, usage),
      attempts,
      ...(restrictions.size > 0 ? { restrictedBy: [...restrictions].sort() } : {}),
    };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function elapsed(since: number): number {
  return Math.round((performance.now() - since) * 10) / 10;
}
