import type { RequestMeta } from '@switchyard/contracts';
import type { Logger } from '@switchyard/observability';
import type { DecisionExplanation, RouterAdmin, TargetSnapshot } from './admin/router-admin';
import { RouterAdminView } from './admin/router-admin-view';
import { backoffDelayMs } from './backoff/backoff';
import { CallRetryBudget, InMemoryRetryBudgetStore, retryBudgetLimit, type RetryBudgetStore } from './budget/retry-budget';
import { RetryBudgetSpentError } from './budget/retry-budget-spent.error';
import { AttemptExecutor } from './calls/attempt-executor';
import { Coalescer, coalescingKey } from './calls/coalescer';
import { realTimer, type ScheduleTimer } from './calls/hedge-race';
import { runHedgedAttempt } from './calls/hedged-attempt';
import type { AttemptOutcome, CallContext, ChatCallRequest, ChatCallResult } from './calls/chat-call';
import { estimateInputTokens, type TokenLimits } from './calls/estimate-tokens';
import { CallAbortedError, RouterCallError, type AttemptRecord } from './calls/router-call.error';
import type { UpstreamError } from './calls/upstream-error';
import { systemClock, type Clock } from './clock';
import type { CompiledRouterConfig } from './config/compile-router-config';
import type { RouterConfig } from './config/router-config.schema';
import { inferMissingMeta, type InferredMeta, type MetaInference } from './inference/infer-meta';
import { FleetFullMarks, fleetSlotMayFree } from './fleet/fleet-full-filter';
import { FleetHealthBoard, type PeerHealthReport, type TargetHealthReport } from './fleet/fleet-health';
import type { TargetLimiter } from './fleet/target-limiter';
import type { FailureClass } from './health/health-settings';
import { httpKnownGoodProbe, NetworkSelfCheck, type KnownGoodProbe, type NetworkStatus } from './health/network-self-check';
import type { CallObserver } from './observe/call-observer';
import { logDecision } from './observe/decision-log';
import type { SecretResolver } from './providers/api-key';
import { openAiProviders, ProviderRegistry, type ProviderFactory } from './providers/provider-registry';
import { tracedProviders } from './providers/traced-provider';
import type { UpstreamFetchOptions } from './providers/upstream-fetch';
import type { CandidateFilter } from './routing/candidate-filter';
import type { DecideOptions } from './routing/decide';
import { NoEligibleTargetError } from './routing/no-eligible-target.error';
import { RouteSelector } from './routing/route-selector';
import { ANY_ELIGIBLE_RULE, FORCED_PRIMARY_RULE, type RoutingDecision } from './routing/routing-decision';
import { TargetStateRegistry } from './state/target-state';
import type { CanaryCaseResult } from './canary/canary-verdict';
import type { WeightChangeEntry } from './weights/weight-book';

export type { CallContext, ChatCallRequest, ChatCallResult } from './calls/chat-call';

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
  /** Starts hedged attempts (`hedge_after_ms`) and network re-checks; setTimeout unless given. */
  timer?: ScheduleTimer;
  /** Checks `network_check.known_good_url` ("is it me or them"); an HTTP GET unless given. */
  knownGoodProbe?: KnownGoodProbe;
}

/** What a shared (coalesced) attempt hands every caller: the outcome, or the fleet slot it could not get. */
type SharedAttempt = { outcome: AttemptOutcome } | { refused: { reason: 'concurrency' | 'rpm' | 'tpm'; retryAfterMs: number } };

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

function backoffSettings(config: RouterConfig) {
  const b = config.backoff;
  return { baseMs: b.base_ms, maxMs: b.max_ms, jitterMs: b.jitter_ms };
}

/**
 * Routes model calls: decides a target per attempt over live health, breaker, quota and
 * recovery state (`RouteSelector`), calls it with three-stage timeouts (`AttemptExecutor`),
 * classifies failures and fails over within one deadline and the job's retry budget. The
 * operator side is `RouterAdminView`. Plain TypeScript; apps wrap it.
 */
export class Router implements RouterAdmin {
  private readonly selector: RouteSelector;
  private readonly executor: AttemptExecutor;
  private readonly admin: RouterAdminView;
  private readonly states: TargetStateRegistry;
  private readonly contextFilters: RouterOptions['contextFilters'];
  private readonly fleetFull: FleetFullMarks;
  private readonly fleetHealth: FleetHealthBoard;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly budgetStore: RetryBudgetStore;
  private readonly logger: Logger;
  private readonly timer: ScheduleTimer;
  private readonly coalescer = new Coalescer<SharedAttempt>();
  private readonly selfCheck: NetworkSelfCheck;
  /** Rules with `hedge_after_ms`, by name; empty when no rule hedges (the common case costs one size check). */
  private hedgeByRule = new Map<string, number>();

  constructor(options: RouterOptions) {
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? sleepWithSignal;
    this.timer = options.timer ?? realTimer;
    this.hedgeByRule = hedgeSettings(options.config.config);
    this.budgetStore = options.retryBudget ?? new InMemoryRetryBudgetStore(this.clock);
    this.contextFilters = options.contextFilters;
    this.fleetFull = new FleetFullMarks(this.clock);
    this.fleetHealth = new FleetHealthBoard(this.clock);
    this.states = new TargetStateRegistry(options.config.config, (target, state) => this.admin.breakerChanged(target, state));
    this.selfCheck = new NetworkSelfCheck({
      config: () => this.selector.config.config,
      states: this.states,
      logger: options.logger,
      clock: this.clock,
      timer: this.timer,
      probe: options.knownGoodProbe ?? httpKnownGoodProbe,
    });
    this.selector = new RouteSelector({
      config: options.config,
      states: this.states,
      secrets: options.secrets,
      fleetFull: this.fleetFull,
      fleetHealth: this.fleetHealth,
      filters: options.filters ?? [],
      clock: this.clock,
      random: this.random,
    });
    this.executor = new AttemptExecutor({
      config: () => this.selector.config,
      states: this.states,
      providers: new ProviderRegistry(tracedProviders(options.providerFactory ?? openAiProviders(options.upstream))),
      secrets: options.secrets,
      observers: options.observers ?? [],
      limiter: options.limiter,
      logger: options.logger,
      clock: this.clock,
      selfCheck: this.selfCheck,
    });
    this.admin = new RouterAdminView(this.selector, this.states, options.logger, this.clock, this.selfCheck);
  }

  get config(): CompiledRouterConfig {
    return this.selector.config;
  }

  /**
   * Applies a new compiled config. Targets that still exist keep their health, breaker and
   * in-flight state and run on the new health, breaker and recovery settings from now on; a
   * forced primary that no longer exists is cleared.
   */
  reload(config: CompiledRouterConfig): void {
    this.states.reload(config.config);
    this.selector.reload(config);
    this.hedgeByRule = hedgeSettings(config.config);
  }

  /** Upstream attempts started for coalescable calls, and calls that shared one already in flight (this process). */
  coalescingStats(): { leaders: number; followers: number } {
    return { leaders: this.coalescer.leaders, followers: this.coalescer.followers };
  }

  /** Closes the upstream connection pools (calls in flight finish first) and hands back fleet slots. */
  close(): Promise<void> {
    this.selfCheck.stop();
    return this.executor.close();
  }

  /** "Is it me or them": whether this process's own network looks down (for the admin banner and the metrics). */
  networkStatus(): NetworkStatus {
    return this.selfCheck.status();
  }

  /** The decision this router would make now; `options.filters` run after the router's own. */
  decide(meta: RequestMeta, options: DecideOptions = {}): RoutingDecision {
    return this.selector.decide(meta, options);
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
      request.meta.estimated_input_tokens === undefined
        ? { ...request.meta, estimated_input_tokens: estimateInputTokens(request.messages, this.tokenLimits()) }
        : request.meta;
    this.selector.assertContextFits(meta);
    const config = this.selector.config.config;
    // One deadline for the whole chain: meta.timeout_ms; each attempt is also bounded by its target's timeouts.
    const deadlineEnd = meta.timeout_ms === undefined ? Number.POSITIVE_INFINITY : started + meta.timeout_ms;
    const jobId = request.context?.jobId;
    // One job's calls (or one gateway user's) see one target of a weighted split.
    const stickyKey = request.context?.stickyKey ?? jobId;
    const budget = new CallRetryBudget(this.budgetStore, retryBudgetLimit(config, request.context?.jobTaskCount), jobId);
    // A spent budget does not fail the work: one trial attempt, outside the budget, tells whether a target answers again.
    // The budget is read once the first attempt did not simply succeed: a call answered at once never needs it.
    let trial: boolean | undefined;
    const excluded = new Set(request.excludeTargets ?? []);
    const attempts: AttemptRecord[] = [];
    const maxAttempts = () => (trial ? 1 : config.max_attempts_per_call);
    let lastError: UpstreamError | undefined;
    let stopReason: string | undefined;
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
    const onEvents = request.passThrough?.onEvents;
    const attemptRequest: ChatCallRequest =
      onEvents === undefined
        ? request
        : { ...request, passThrough: { ...request.passThrough!, onEvents: (sse, target) => onEvents(sse, target, restrictions.size > 0 ? [...restrictions].sort() : undefined) } };

    while (attempts.length < maxAttempts()) {
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
        decision = this.decide(meta, { excludeTargets: excluded, filters: callFilters, ...(stickyKey === undefined ? {} : { stickyKey }) });
      } catch (error) {
        if (error instanceof NoEligibleTargetError && this.executor.fleetWide && fleetSlotMayFree(error.explanation)) {
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

      const attempt = attempts.length + 1;
      let outcome: AttemptOutcome;
      const coalesceKey = config.coalescing.enabled ? coalescingKey(request) : undefined;
      if (coalesceKey !== undefined) {
        const chosen = decision;
        let shared: { value: SharedAttempt; shared: boolean };
        try {
          shared = await this.coalescer.run(`${chosen.target.name}:${coalesceKey}`, request.signal, (signal) =>
            this.soleAttempt(chosen, meta, { ...attemptRequest, signal }, remainingMs, attempt, lastError),
          );
        } catch (error) {
          if (request.signal?.aborted) throw new CallAbortedError(attempts, { cause: request.signal.reason });
          throw error;
        }
        if ('refused' in shared.value) {
          this.markFleetFull(chosen.target.name, shared.value.refused);
          continue;
        }
        outcome = shared.value.outcome;
        attempts.push(shared.shared ? { ...outcome.record, coalesced: true } : outcome.record);
      } else {
        const slot = await this.executor.acquireSlot(decision.target, meta, request);
        if (slot !== undefined && !slot.granted) {
          this.markFleetFull(decision.target.name, slot);
          continue;
        }
        logDecision(this.logger, decision, meta, attempt, lastError);
        const hedgeAfterMs = this.hedgeByRule.size === 0 || trial || attempt >= maxAttempts() ? undefined : this.hedgeAfterMs(decision);
        if (hedgeAfterMs === undefined) {
          try {
            outcome = await this.executor.run(decision, meta, attemptRequest, remainingMs, attempt);
          } finally {
            slot?.slot.release();
          }
          attempts.push(outcome.record);
          this.executor.notify(decision, meta, request, outcome, attempt);
        } else {
          const primary = decision;
          const hedged = await runHedgedAttempt(this.executor, this.timer, this.logger, {
            decision: primary,
            releasePrimarySlot: () => slot?.slot.release(),
            hedgeAfterMs,
            meta,
            request: attemptRequest,
            remainingMs,
            attempt,
            pickHedge: () => this.pickHedge(meta, request, primary, excluded, callFilters, budget),
          });
          for (const leg of hedged.legs) {
            attempts.push(leg.outcome.record);
            this.executor.notify(leg.decision, meta, request, leg.outcome, leg.attempt);
            excluded.add(leg.decision.target.name);
            // The hedge is one more upstream attempt of the job: it counts against the budget like a retry.
            if (leg.attempt !== attempt && !trial) await this.spendBudget(budget, request.context);
          }
          decision = hedged.decision;
          outcome = hedged.outcome;
        }
      }
      // Structured output that fails its schema may be retried elsewhere; any other answer is the call's.
      const schemaMiss = outcome.ok && outcome.badOutput && request.responseFormat?.type === 'json_schema';
      if (outcome.ok && !schemaMiss) return this.answer(outcome, decision, meta, attempts, started, restrictions);
      if (!outcome.ok && 'aborted' in outcome) throw new CallAbortedError(attempts, { cause: outcome.aborted });
      trial ??= await budget.exhausted();
      if (outcome.ok) {
        // A trial's answer is the call's as it is.
        if (trial) return this.answer(outcome, decision, meta, attempts, started, restrictions);
        // Structured output that fails its schema is this target's failure: the next target may do better.
        lastBadOutput = { outcome, decision };
        await this.spendBudget(budget, request.context);
        excluded.add(decision.target.name);
        continue;
      }
      lastError = outcome.error;
      // A model still loading is not a failure (SPEC §3.8): the call moves on without spending the budget.
      if (!outcome.coldStart && !trial) await this.spendBudget(budget, request.context);
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
        const delay = Math.min(backoffDelayMs(rateLimitedRetries, backoffSettings(config), this.random), config.backoff.max_ms, deadlineEnd - performance.now());
        rateLimitedRetries += 1;
        if (delay > 0) await this.sleep(delay, request.signal);
      }
    }

    // No target answered as the schema asks: the caller gets the last answer there was and judges it.
    if (lastBadOutput !== undefined) {
      return this.executor.result(lastBadOutput.outcome.result, lastBadOutput.outcome.record, lastBadOutput.decision, meta, attempts, started, restrictions);
    }
    const errorClass = lastError?.errorClass ?? 'timeout';
    if (budgetSpent) {
      this.logger.info({ job_id: jobId, limit: budget.limit, error_class: errorClass, attempts: attempts.length, trial: trial === true }, 'retry budget of the job spent: the call stops and its task waits for a target to recover');
      throw new RetryBudgetSpentError(attempts, errorClass, budget.limit, jobId, { cause: lastError, trial: trial === true });
    }
    throw new RouterCallError(attempts, errorClass, { cause: lastError, reason: stopReason ?? `${maxAttempts()} attempts allowed per call` });
  }

  /** The call's answer; a caller that shared another's upstream call paid nothing for it: that call's ledger entry carries the cost. */
  private answer(
    outcome: Extract<AttemptOutcome, { ok: true }>,
    decision: RoutingDecision,
    meta: RequestMeta,
    attempts: AttemptRecord[],
    started: number,
    restrictions: ReadonlySet<string>,
  ): ChatCallResult {
    const result = this.executor.result(outcome.result, outcome.record, decision, meta, attempts, started, restrictions);
    return attempts[attempts.length - 1]!.coalesced ? { ...result, costUsd: 0, coalesced: true } : result;
  }

  /** What the input-token figure of a call must settle under the current config (see `estimateInputTokens`). */
  private tokenLimits(): TokenLimits {
    const { targets, config } = this.selector.config;
    let tightestContextTokens = Number.POSITIVE_INFINITY;
    let tokenQuota = false;
    for (const target of targets) {
      tightestContextTokens = Math.min(tightestContextTokens, target.context_window * config.context_max_share);
      if (target.tpm !== undefined) tokenQuota = true;
    }
    return { tightestContextTokens, tokenQuota };
  }

  /** One attempt on the chosen target with its own fleet slot: the unit coalesced calls share. */
  private async soleAttempt(
    decision: RoutingDecision,
    meta: RequestMeta,
    request: ChatCallRequest,
    remainingMs: number,
    attempt: number,
    lastError: UpstreamError | undefined,
  ): Promise<SharedAttempt> {
    const slot = await this.executor.acquireSlot(decision.target, meta, request);
    if (slot !== undefined && !slot.granted) return { refused: { reason: slot.reason, retryAfterMs: slot.retryAfterMs } };
    logDecision(this.logger, decision, meta, attempt, lastError);
    let outcome: AttemptOutcome;
    try {
      outcome = await this.executor.run(decision, meta, request, remainingMs, attempt);
    } finally {
      slot?.slot.release();
    }
    this.executor.notify(decision, meta, request, outcome, attempt);
    return { outcome };
  }

  private markFleetFull(target: string, refused: { reason: 'concurrency' | 'rpm' | 'tpm'; retryAfterMs: number }): void {
    const limits = this.selector.config.config.fleet_limits;
    this.fleetFull.mark(target, refused.reason, refused.reason === 'concurrency' ? limits.slot_poll_ms : Math.min(refused.retryAfterMs, 1_000));
  }

  /** The rule whose `hedge_after_ms` applies: the deciding rule, or the first matching one when the policy step or a forced primary decided. */
  private hedgeAfterMs(decision: RoutingDecision): number | undefined {
    const rule = decision.rule === ANY_ELIGIBLE_RULE || decision.rule === FORCED_PRIMARY_RULE ? decision.matchedRules[0] : decision.rule;
    return rule === undefined ? undefined : this.hedgeByRule.get(rule);
  }

  /** The hedge's target: the next eligible candidate (the sensitivity rule holds as for any attempt), with its fleet slot. */
  private async pickHedge(
    meta: RequestMeta,
    request: ChatCallRequest,
    primary: RoutingDecision,
    excluded: ReadonlySet<string>,
    filters: readonly CandidateFilter[],
    budget: CallRetryBudget,
  ): Promise<{ decision: RoutingDecision; release: () => void } | undefined> {
    if (await budget.exhausted()) return undefined;
    let decision: RoutingDecision;
    try {
      decision = this.decide(meta, { excludeTargets: new Set([...excluded, primary.target.name]), filters });
    } catch (error) {
      if (error instanceof NoEligibleTargetError) return undefined;
      throw error;
    }
    const slot = await this.executor.acquireSlot(decision.target, meta, request);
    if (slot !== undefined && !slot.granted) return undefined;
    return { decision, release: () => slot?.slot.release() };
  }

  /** Counts a failed attempt against the job's budget; the one that uses it up is logged and told to the observers. */
  private async spendBudget(budget: CallRetryBudget, context: CallContext | undefined): Promise<void> {
    if (!(await budget.spend())) return;
    this.logger.warn(
      { job_id: context?.jobId, tenant_id: context?.tenantId, limit: budget.limit },
      'retry budget of the job exhausted: each of its calls now makes one trial attempt until a target answers',
    );
    this.executor.notifyRetryBudgetExhausted(context, budget.limit);
  }

  // ---- the operator side (RouterAdminView) ----

  /**
   * An agent found a reply it could not use (e.g. it failed its schema): counts as bad
   * output of that target. JSON-mode replies that are not JSON are already counted by the router.
   */
  reportBadOutput(targetName: string): void {
    this.admin.reportBadOutput(targetName);
  }

  /** An active probe's result (see `TargetProber` and `RouterAdminView.recordProbe`). */
  recordProbe(targetName: string, result: { ok: boolean; coldStart?: boolean; failure?: FailureClass; latencyMs: number; kind?: 'liveness' | 'inference' }): void {
    this.admin.recordProbe(targetName, result);
  }

  /** One round of business canaries on `targetName` (see `CanaryProber`). */
  recordCanaryRound(targetName: string, results: readonly CanaryCaseResult[]): void {
    this.admin.recordCanaryRound(targetName, results);
  }

  /** One dynamic-weights round (see `WeightRebalancer`): each split's weights step toward their targets' scores; returns the changes. */
  rebalanceWeights(): WeightChangeEntry[] {
    return this.admin.rebalanceWeights();
  }

  /** Tells `listener` whenever this process's traffic opens a target's breaker (for the fleet). Returns the unsubscribe. */
  onBreakerOpen(listener: (target: string, cooldownLeftMs: number) => void): () => void {
    return this.admin.onBreakerOpen(listener);
  }

  /** Tells `listener` whenever this process's half-open probes close a target's breaker. Returns the unsubscribe. */
  onBreakerClose(listener: (target: string) => void): () => void {
    return this.admin.onBreakerClose(listener);
  }

  /** A breaker opened in another process: open here too while that process probes it (see `RouterAdminView`). */
  applyFleetBreakerOpen(target: string, cooldownLeftMs: number): void {
    this.admin.applyFleetBreakerOpen(target, cooldownLeftMs);
  }

  /** The process that probed a target closed its breaker: closed here too. */
  applyFleetBreakerClose(target: string): void {
    this.admin.applyFleetBreakerClose(target);
  }

  /** This process's health of every target, for its peers (published with the fleet snapshot). */
  healthReport(): TargetHealthReport[] {
    const now = this.clock.now();
    return this.selector.config.targets.map((target) => {
      const state = this.states.get(target.name)!;
      const stats = state.window.stats(now);
      const firstTokenMeanMs = state.window.meanFirstTokenMs(now);
      return {
        target: target.name,
        score: state.health.score,
        requests: stats.requests,
        failures: stats.successRate === null ? 0 : Math.round(stats.requests * (1 - stats.successRate)),
        firstTokenMeanMs,
        firstTokenSamples: firstTokenMeanMs === null ? 0 : state.window.firstTokenSamples,
      };
    });
  }

  /** The other processes' latest health reports: routing scores each target on the merged view from now on. */
  applyFleetHealth(peers: readonly PeerHealthReport[], maxAgeMs: number): void {
    this.fleetHealth.replace(peers, maxAgeMs);
  }

  snapshot(): TargetSnapshot[] {
    return this.admin.snapshot();
  }

  /** The decision for `meta` explained; `inferred` (from `inferMeta`) is shown beside it. */
  explain(meta: RequestMeta, inferred?: InferredMeta): DecisionExplanation {
    const explanation = this.admin.explain(meta);
    return inferred === undefined ? explanation : { ...explanation, inferred };
  }

  /**
   * `task_type` / `complexity` for a request that left them out (`given`: its meta before
   * defaults), from the config's classifier; undefined when inference is off or nothing is missing.
   */
  inferMeta(given: Readonly<Record<string, unknown>>, messages: readonly { role?: string; content: string }[]): MetaInference | undefined {
    const compiled = this.selector.config;
    if (compiled.classifier === undefined) return undefined;
    return inferMissingMeta(compiled.classifier, compiled.config.inferred_meta.min_score, given, messages);
  }

  get readOnly(): boolean {
    return this.admin.readOnly;
  }

  setReadOnly(enabled: boolean): void {
    this.admin.setReadOnly(enabled);
  }

  drain(target: string): void {
    this.admin.drain(target);
  }

  enable(target: string): void {
    this.admin.enable(target);
  }

  forcePrimary(target: string | null): void {
    this.admin.forcePrimary(target);
  }
}

function hedgeSettings(config: RouterConfig): Map<string, number> {
  const byRule = new Map<string, number>();
  for (const rule of config.routes) if (rule.hedge_after_ms !== undefined) byRule.set(rule.name, rule.hedge_after_ms);
  return byRule;
}
