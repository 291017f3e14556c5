import type { RequestMeta } from '@switchyard/contracts';
import type { Logger } from '@switchyard/observability';
import type { DecisionExplanation, RouterAdmin, TargetSnapshot } from './admin/router-admin';
import { explainDecision, snapshotTarget, UnknownTargetError } from './admin/router-admin.views';
import { backoffDelayMs, parseRetryAfterMs } from './backoff/backoff';
import { CallRetryBudget, InMemoryRetryBudgetStore, retryBudgetLimit, type RetryBudgetStore } from './budget/retry-budget';
import { RetryBudgetSpentError } from './budget/retry-budget-spent.error';
import { looksLikeJsonObject } from './calls/bad-output';
import { ContextWindowExceededError } from './calls/context-window.error';
import { costUsd, type TokenUsage } from './calls/cost';
import { countTextTokens, estimateTokens } from './calls/estimate-tokens';
import { CallAbortedError, RouterCallError, type AttemptRecord } from './calls/router-call.error';
import { classifyUpstreamError, isModelLoading, retryAfterHeader, UpstreamError } from './calls/upstream-error';
import { systemClock, type Clock } from './clock';
import type { CompiledRouterConfig } from './config/compile-router-config';
import type { RoutingPolicy, TargetConfig } from './config/router-config.schema';
import { FleetFullMarks, fleetSlotMayFree } from './fleet/fleet-full-filter';
import type { SlotResult, TargetLimiter } from './fleet/target-limiter';
import type { FailureClass } from './health/health-settings';
import type { AttemptEvent, AttemptRecorder, CallObserver } from './observe/call-observer';
import { missingApiKeyFilter, resolveApiKey, type SecretResolver } from './providers/api-key';
import type { ChatMessage, ChoiceDelta, ProviderChoice, ProviderResult, ResponseFormat, ToolCall } from './providers/chat-provider';
import { matchesJsonSchema } from './calls/structured-output';
import { openAiProviders, ProviderRegistry, type ProviderFactory } from './providers/provider-registry';
import type { UpstreamFetchOptions } from './providers/upstream-fetch';
import { contextWindowFilter, sensitiveRequiresLocal, type CandidateFilter } from './routing/candidate-filter';
import { decideRoute, type DecideOptions } from './routing/decide';
import { NoEligibleTargetError } from './routing/no-eligible-target.error';
import type { RoutingDecision } from './routing/routing-decision';
import { scoreTarget } from './scoring/target-score';
import { LIVE_DROP_REASONS, liveTargetFilter } from './state/live-target-filter';
import { TargetStateRegistry } from './state/target-state';
import { attemptTotalMs, StagedDeadline } from './timing/staged-deadline';

export interface RouterOptions {
  config: CompiledRouterConfig;
  secrets: SecretResolver;
  logger: Logger;
  /** Run after the built-in filters (missing API key, context window, live state), in order. */
  filters?: readonly CandidateFilter[];
  /**
   * Filters for one call from who makes it, read once per call (e.g. a tenant over its daily
   * budget gets cloud targets dropped). They run after every other filter, so they can only
   * narrow the choice: the sensitive → local rule always holds.
   */
  contextFilters?: (context: CallContext) => Promise<readonly CandidateFilter[]>;
  /** How a target is spoken to; OpenAI-compatible HTTP (through `upstream`) unless given. */
  providerFactory?: ProviderFactory;
  /** How upstream connections are made (an egress proxy), for the default provider factory. */
  upstream?: UpstreamFetchOptions;
  /** Told of every upstream attempt (cost ledger, metrics). */
  observers?: readonly CallObserver[];
  /** Counts each target's max_concurrency, rpm and tpm for the whole fleet; this process's own counts only unless given. */
  limiter?: TargetLimiter;
  /** Where a job's retry budget is counted; in memory (this process only) unless given. */
  retryBudget?: RetryBudgetStore;
  clock?: Clock;
  /** 0..1, for jitter and recovery shares. */
  random?: () => number;
  /** Waits between attempts (backoff); resolves early when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

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
  /** Every streamed piece of every choice (content and tool-call fragments); the same no-failover rule as `onDelta`. */
  onChoiceDelta?: (delta: ChoiceDelta, target: string) => void;
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

export interface CallContext {
  tenantId?: string;
  jobId?: string;
  taskId?: string;
  step?: number;
  traceId?: string;
  /** Tasks in the job: its retry budget grows with them (`retry_budget_per_task`). */
  jobTaskCount?: number;
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
}

type AttemptOutcome =
  | { ok: true; record: AttemptRecord; result: ProviderResult; badOutput: boolean }
  | { ok: false; record: AttemptRecord; error: UpstreamError; streamed: boolean; retryAfterMs?: number; coldStart?: boolean }
  | { ok: false; record: AttemptRecord; aborted: unknown };

const sleepWithSignal = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * Routes model calls: decides a target per attempt over live health, breaker, quota and
 * recovery state, calls it with three-stage timeouts, classifies failures and fails over
 * within one deadline and the job's retry budget. Plain TypeScript; apps wrap it.
 */
export class Router implements RouterAdmin {
  private current: CompiledRouterConfig;
  private readonly secrets: SecretResolver;
  private readonly logger: Logger;
  private readonly extraFilters: readonly CandidateFilter[];
  private readonly contextFilters: RouterOptions['contextFilters'];
  private readonly providers: ProviderRegistry;
  private readonly observers: readonly CallObserver[];
  private readonly states: TargetStateRegistry;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly budgetStore: RetryBudgetStore;
  private readonly limiter: TargetLimiter | undefined;
  private readonly fleetFull: FleetFullMarks;
  private filters: readonly CandidateFilter[] = [];
  /** The same filters with recovery shares off: the second look when nothing else is left. */
  private filtersWithoutShare: readonly CandidateFilter[] = [];
  private forced: string | undefined;
  private readonly breakerListeners = new Set<(target: string, cooldownLeftMs: number) => void>();
  private readonly score = (target: TargetConfig, policy: RoutingPolicy): number => {
    const state = this.states.get(target.name);
    return scoreTarget(target, policy, {
      health: state?.health.score ?? 100,
      firstTokenP50Ms: state?.window.meanFirstTokenMs(this.clock.now()) ?? null,
    });
  };

  constructor(options: RouterOptions) {
    this.current = options.config;
    this.secrets = options.secrets;
    this.logger = options.logger;
    this.extraFilters = options.filters ?? [];
    this.contextFilters = options.contextFilters;
    this.providers = new ProviderRegistry(options.providerFactory ?? openAiProviders(options.upstream));
    this.observers = options.observers ?? [];
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? sleepWithSignal;
    this.budgetStore = options.retryBudget ?? new InMemoryRetryBudgetStore(this.clock);
    this.limiter = options.limiter;
    this.fleetFull = new FleetFullMarks(this.clock);
    this.states = new TargetStateRegistry(options.config.config, (target) => this.breakerOpened(target));
    this.buildFilters();
  }

  get config(): CompiledRouterConfig {
    return this.current;
  }

  /**
   * Applies a new compiled config. Targets that still exist keep their health, breaker and
   * in-flight state and run on the new health, breaker and recovery settings from now on; a
   * forced primary that no longer exists is cleared.
   */
  reload(config: CompiledRouterConfig): void {
    this.current = config;
    this.states.reload(config.config);
    if (this.forced !== undefined && !config.targetsByName.has(this.forced)) this.forced = undefined;
    this.buildFilters();
  }

  /** Closes the upstream connection pools (calls in flight finish first) and hands back fleet slots. */
  async close(): Promise<void> {
    await Promise.all([this.providers.closeAll(), this.limiter?.close()]);
  }

  /** The decision this router would make now; `options.filters` run after the router's own. */
  decide(meta: RequestMeta, options: DecideOptions = {}): RoutingDecision {
    const extra = options.filters;
    const decideWith = (filters: readonly CandidateFilter[]) =>
      decideRoute(this.current, meta, {
        excludeTargets: options.excludeTargets,
        filters: extra === undefined || extra.length === 0 ? filters : [...filters, ...extra],
        forcedPrimary: options.forcedPrimary ?? this.forced,
        score: this.score,
      });
    try {
      return decideWith(this.filters);
    } catch (error) {
      // A recovering target held back by its share is still better than no target at all.
      if (error instanceof NoEligibleTargetError && error.explanation.candidates.some((c) => c.reason === LIVE_DROP_REASONS.recovering)) {
        return decideWith(this.filtersWithoutShare);
      }
      throw error;
    }
  }

  /**
   * One model call with failover. Throws `NoEligibleTargetError` when no target may serve it,
   * `ContextWindowExceededError` when the input fits no target, `RetryBudgetSpentError` (a
   * `RouterCallError` to wait on) when the job's retry budget ran out, `RouterCallError` when
   * every attempt failed, `CallAbortedError` when `signal` aborted. Once the job's budget is
   * spent, a call makes one trial attempt outside it, without failover: the caller's waits
   * between calls, not the budget, then bound the attempts.
   */
  async chat(request: ChatCallRequest): Promise<ChatCallResult> {
    const started = performance.now();
    const meta: RequestMeta =
      request.meta.estimated_input_tokens === undefined ? { ...request.meta, estimated_input_tokens: estimateTokens(request.messages) } : request.meta;
    this.assertContextFits(meta);
    const config = this.current.config;
    // One deadline for the whole chain: meta.timeout_ms; each attempt is also bounded by its target's timeouts.
    const deadlineEnd = meta.timeout_ms === undefined ? Number.POSITIVE_INFINITY : started + meta.timeout_ms;
    const jobId = request.context?.jobId;
    const budget = new CallRetryBudget(this.budgetStore, retryBudgetLimit(config, request.context?.jobTaskCount), jobId);
    // A spent budget does not fail the work: one trial attempt, outside the budget, tells whether a target answers again.
    const trial = await budget.exhausted();
    const excluded = new Set(request.excludeTargets ?? []);
    const attempts: AttemptRecord[] = [];
    const maxAttempts = trial ? 1 : config.max_attempts_per_call;
    let lastError: UpstreamError | undefined;
    let stopReason = `${maxAttempts} attempts allowed per call`;
    let budgetSpent = false;
    let rateLimitedRetries = 0;
    let slotWaitEnd: number | undefined;
    let lastBadOutput: { outcome: Extract<AttemptOutcome, { ok: true }>; decision: RoutingDecision } | undefined;
    // The reasons the per-call filters dropped a target for (e.g. the tenant's daily budget): the caller may tell its client.
    const restrictions = new Set<string>();
    const callFilters = (request.context && this.contextFilters ? await this.contextFilters(request.context) : []).map(
      (filter): CandidateFilter =>
        (target, filterMeta) => {
          const drop = filter(target, filterMeta);
          if (drop !== null) restrictions.add(drop.reason);
          return drop;
        },
    );

    while (attempts.length < maxAttempts) {
      if (request.signal?.aborted) throw new CallAbortedError(attempts, { cause: request.signal.reason });
      const remainingMs = deadlineEnd - performance.now();
      if (remainingMs < 1) {
        stopReason = `the call's timeout of ${meta.timeout_ms} ms is spent`;
        break;
      }
      if (attempts.length > 0 && (await budget.exhausted())) {
        budgetSpent = true;
        break;
      }
      let decision: RoutingDecision;
      try {
        decision = this.decide(meta, { excludeTargets: excluded, filters: callFilters });
      } catch (error) {
        if (error instanceof NoEligibleTargetError && this.limiter !== undefined && fleetSlotMayFree(error.explanation)) {
          // Full fleet-wide, not here: another process's call will end; wait for its slot a while.
          const limits = config.fleet_limits;
          slotWaitEnd ??= this.clock.now() + (request.slotWaitMs ?? limits.slot_wait_ms);
          const waitMs = Math.min(limits.slot_poll_ms * (0.5 + this.random()), slotWaitEnd - this.clock.now(), deadlineEnd - performance.now());
          if (waitMs >= 1) {
            await this.sleep(waitMs, request.signal);
            continue;
          }
        }
        if (error instanceof NoEligibleTargetError && (lastError !== undefined || lastBadOutput !== undefined)) {
          stopReason = 'no other eligible target';
          break;
        }
        throw error;
      }

      const slot = await this.acquireSlot(decision.target, meta, request);
      if (slot !== undefined && !slot.granted) {
        const limits = config.fleet_limits;
        this.fleetFull.mark(decision.target.name, slot.reason, slot.reason === 'concurrency' ? limits.slot_poll_ms : Math.min(slot.retryAfterMs, 1_000));
        continue;
      }
      const attempt = attempts.length + 1;
      let outcome: AttemptOutcome;
      try {
        outcome = await this.attempt(decision, meta, request, remainingMs, attempt);
      } finally {
        slot?.slot.release();
      }
      attempts.push(outcome.record);
      this.notify(decision, meta, request, outcome, attempt);
      if (outcome.ok && outcome.badOutput && request.responseFormat?.type === 'json_schema' && !trial) {
        // Structured output that fails its schema is this target's failure: the next target may do better.
        lastBadOutput = { outcome, decision };
        await budget.spend();
        excluded.add(decision.target.name);
        continue;
      }
      if (outcome.ok) return this.result(outcome.result, outcome.record, decision, meta, attempts, started, restrictions);
      if ('aborted' in outcome) throw new CallAbortedError(attempts, { cause: outcome.aborted });
      lastError = outcome.error;
      // A model still loading is not a failure (SPEC §3.8): the call moves on without spending the budget.
      if (!outcome.coldStart && !trial) await budget.spend();
      if (!lastError.retryable) {
        stopReason = 'a bad request is not retried';
        break;
      }
      if (outcome.streamed) {
        stopReason = 'part of the answer had already been streamed to the caller';
        break;
      }
      if (trial) {
        budgetSpent = true;
        break;
      }
      excluded.add(decision.target.name);
      if (lastError.errorClass === 'rate_limited') {
        // SPEC §3.5: a short backoff, then another target (the limited one cools down for its Retry-After).
        const delay = Math.min(backoffDelayMs(rateLimitedRetries, this.backoffSettings(), this.random), config.backoff.max_ms, deadlineEnd - performance.now());
        rateLimitedRetries += 1;
        if (delay > 0) await this.sleep(delay, request.signal);
      }
    }

    // No target answered as the schema asks: the caller gets the last answer there was and judges it.
    if (lastBadOutput !== undefined) {
      return this.result(lastBadOutput.outcome.result, lastBadOutput.outcome.record, lastBadOutput.decision, meta, attempts, started, restrictions);
    }
    const errorClass = lastError?.errorClass ?? 'timeout';
    if (budgetSpent) throw new RetryBudgetSpentError(attempts, errorClass, budget.limit, jobId, { cause: lastError, trial });
    throw new RouterCallError(attempts, errorClass, { cause: lastError, reason: stopReason });
  }

  /**
   * An agent found a reply it could not use (e.g. it failed its schema): counts as bad
   * output of that target. JSON-mode replies that are not JSON are already counted by the router.
   */
  reportBadOutput(targetName: string): void {
    this.states.get(targetName)?.observe(this.clock.now(), { ok: false, failure: 'bad_output', latencyMs: 0 });
  }

  /**
   * An active probe's result (see `TargetProber`). A cold start is neither a success nor a
   * failure. A passing liveness probe only says the server is up; a passing 1-token
   * inference says it answers, which lifts an excluded target back to the threshold.
   */
  recordProbe(targetName: string, result: { ok: boolean; coldStart?: boolean; failure?: FailureClass; latencyMs: number; kind?: 'liveness' | 'inference' }): void {
    const state = this.states.get(targetName);
    if (state === undefined) return;
    if (result.coldStart) {
      state.coldStart = true;
      return;
    }
    if (result.ok) {
      state.coldStart = false;
      if (result.kind !== 'liveness') state.health.recordProbeSuccess();
      return;
    }
    state.observe(this.clock.now(), { ok: false, failure: result.failure ?? 'network', latencyMs: result.latencyMs });
  }

  /** Tells `listener` whenever this process's traffic opens a target's breaker (for the fleet). Returns the unsubscribe. */
  onBreakerOpen(listener: (target: string, cooldownLeftMs: number) => void): () => void {
    this.breakerListeners.add(listener);
    return () => this.breakerListeners.delete(listener);
  }

  /**
   * A breaker opened in another process: it is open here too for the rest of its cooldown,
   * so no call here pays the failures again. Unknown targets are ignored.
   */
  applyFleetBreakerOpen(target: string, cooldownLeftMs: number): void {
    const state = this.states.get(target);
    if (state === undefined || cooldownLeftMs <= 0) return;
    if (state.applyFleetBreakerOpen(this.clock.now(), cooldownLeftMs)) {
      this.logger.warn({ target, cooldown_left_ms: cooldownLeftMs }, 'breaker opened by another process of the fleet; open here too');
    }
  }

  // ---- RouterAdmin ----

  snapshot(): TargetSnapshot[] {
    const now = this.clock.now();
    return this.current.targets.map((target) => snapshotTarget(target, this.states.get(target.name)!, now, this.current.config, this.forced === target.name));
  }

  explain(meta: RequestMeta): DecisionExplanation {
    const byName = this.current.targetsByName;
    try {
      return explainDecision(this.decide(meta), byName, this.score);
    } catch (error) {
      if (error instanceof NoEligibleTargetError) return explainDecision(error.explanation, byName, this.score, error.message);
      throw error;
    }
  }

  drain(target: string): void {
    this.stateOf(target).drained = true;
    this.logger.warn({ target }, 'target drained by an operator');
  }

  enable(target: string): void {
    const state = this.stateOf(target);
    state.drained = false;
    state.coolingUntil = 0;
    state.breaker.reset();
    this.logger.warn({ target }, 'target enabled by an operator');
  }

  forcePrimary(target: string | null): void {
    if (target !== null) this.stateOf(target);
    this.forced = target ?? undefined;
    this.logger.warn({ target }, target === null ? 'forced primary cleared' : 'forced primary set by an operator');
  }

  // ---- internals ----

  private breakerOpened(target: string): void {
    const cooldownLeftMs = this.states.get(target)?.breaker.cooldownLeft(this.clock.now()) ?? 0;
    for (const listener of this.breakerListeners) {
      try {
        listener(target, cooldownLeftMs);
      } catch (error) {
        this.logger.error({ err: error, target }, 'breaker listener failed');
      }
    }
  }

  private stateOf(name: string) {
    const state = this.states.get(name);
    if (state === undefined) throw new UnknownTargetError(name, this.states.names());
    return state;
  }

  /** A fleet-wide slot on the target for one attempt; undefined when limits are this process's own. */
  private async acquireSlot(target: TargetConfig, meta: RequestMeta, request: ChatCallRequest): Promise<SlotResult | undefined> {
    if (this.limiter === undefined || !this.current.config.fleet_limits.enabled) return undefined;
    const tokens = (meta.estimated_input_tokens ?? 0) + (request.maxTokens ?? meta.max_output_tokens ?? 0);
    return this.limiter.acquire(target, tokens);
  }

  private buildFilters(): void {
    const base = [missingApiKeyFilter(this.secrets), contextWindowFilter(this.current.config.context_max_share), this.fleetFull.filter()];
    const live = (applyShare: boolean) => liveTargetFilter(this.states, this.clock, { overload: this.overloadSettings(), random: this.random, applyShare });
    this.filters = [...base, live(true), ...this.extraFilters];
    this.filtersWithoutShare = [...base, live(false), ...this.extraFilters];
  }

  private overloadSettings() {
    const o = this.current.config.overload;
    return { firstTokenMs: o.first_token_ms, queue: o.queue };
  }

  private backoffSettings() {
    const b = this.current.config.backoff;
    return { baseMs: b.base_ms, maxMs: b.max_ms, jitterMs: b.jitter_ms };
  }

  /** SPEC §3.3: no target that may serve the request can hold its input → a clear, non-retryable error. */
  private assertContextFits(meta: RequestMeta): void {
    const tokens = meta.estimated_input_tokens;
    if (tokens === undefined) return;
    const share = this.current.config.context_max_share;
    let fits = false;
    for (const target of this.current.targets) {
      if (sensitiveRequiresLocal(target, meta) === null && tokens <= target.context_window * share) {
        fits = true;
        break;
      }
    }
    if (fits) return;
    const windows = this.current.targets
      .filter((target) => sensitiveRequiresLocal(target, meta) === null)
      .map((target) => ({ target: target.name, contextWindow: target.context_window, limit: Math.floor(target.context_window * share) }));
    throw new ContextWindowExceededError(tokens, windows, share);
  }

  private async attempt(decision: RoutingDecision, meta: RequestMeta, request: ChatCallRequest, remainingMs: number, attempt: number): Promise<AttemptOutcome> {
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
      { connectMs: this.current.config.timeouts.connect_ms, firstTokenMs: target.first_token_timeout_ms, totalMs },
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
    const held: ChoiceDelta[] = [];
    const onDelta = holdBack ? undefined : request.onDelta;
    const onChoiceDelta = request.onChoiceDelta;
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
        onFirstToken: () => deadline.firstToken(),
        ...(onDelta === undefined
          ? {}
          : {
              onDelta: (text: string) => {
                streamed = true;
                onDelta(text, target.name);
              },
            }),
        ...(onChoiceDelta === undefined && !holdBack
          ? {}
          : {
              onChoiceDelta: (delta: ChoiceDelta) => {
                if (holdBack) {
                  held.push(delta);
                  return;
                }
                streamed = true;
                onChoiceDelta?.(delta, target.name);
              },
            }),
      });
      const latencyMs = elapsed(attemptStart);
      const badOutput = this.isBadOutput(request, result);
      if (holdBack && !badOutput) {
        for (const delta of held) {
          onChoiceDelta?.(delta, target.name);
          if (delta.index === 0 && delta.delta.content) request.onDelta?.(delta.delta.content, target.name);
        }
      }
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
      if (coldStart) state.endColdStart();
      else state.end(this.clock.now(), { ok: false, failure: errorClass, latencyMs, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
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

  private notify(decision: RoutingDecision, meta: RequestMeta, request: ChatCallRequest, outcome: AttemptOutcome, attempt: number): void {
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

  private result(
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
