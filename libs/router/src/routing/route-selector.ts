import type { RequestMeta } from '@switchyard/contracts';
import { ContextWindowExceededError } from '../calls/context-window.error';
import type { Clock } from '../clock';
import type { CompiledRouterConfig } from '../config/compile-router-config';
import type { RoutingPolicy, TargetConfig } from '../config/router-config.schema';
import type { FleetFullMarks } from '../fleet/fleet-full-filter';
import type { FleetHealthBoard } from '../fleet/fleet-health';
import { missingApiKeyFilter, type SecretResolver } from '../providers/api-key';
import { scoreTarget } from '../scoring/target-score';
import { LIVE_DROP_REASONS, liveTargetFilter } from '../state/live-target-filter';
import type { TargetStateRegistry } from '../state/target-state';
import { WeightBook } from '../weights/weight-book';
import { contextWindowFilter, sensitiveRequiresLocal, type CandidateFilter } from './candidate-filter';
import { decideRoute, type DecideOptions } from './decide';
import { NoEligibleTargetError } from './no-eligible-target.error';
import type { RoutingDecision } from './routing-decision';

export interface RouteSelectorOptions {
  config: CompiledRouterConfig;
  states: TargetStateRegistry;
  secrets: SecretResolver;
  fleetFull: FleetFullMarks;
  /** The peers' health, merged with this process's own for scoring. */
  fleetHealth: FleetHealthBoard;
  /** Run after the built-in filters, in order. */
  filters: readonly CandidateFilter[];
  clock: Clock;
  random: () => number;
}

/**
 * Route selection: the compiled config, the filters over live state (API key, context window,
 * fleet-full marks, health, breaker, quota, recovery share), the live score and the operator's
 * forced primary, turned into one decision per attempt.
 */
export class RouteSelector {
  private current: CompiledRouterConfig;
  private readonly states: TargetStateRegistry;
  private readonly secrets: SecretResolver;
  private readonly fleetFull: FleetFullMarks;
  private readonly fleetHealth: FleetHealthBoard;
  private readonly extraFilters: readonly CandidateFilter[];
  private readonly clock: Clock;
  private readonly random: () => number;
  private filters: readonly CandidateFilter[] = [];
  /** The same filters with recovery shares off: the second look when nothing else is left. */
  private filtersWithoutShare: readonly CandidateFilter[] = [];
  /** The operator's manual switch (seed 004 §4.3). */
  forced: string | undefined;
  /** The weighted splits' weights as they stand (dynamic weights move them). */
  readonly weights: WeightBook;
  readonly score = (target: TargetConfig, policy: RoutingPolicy): number => {
    const state = this.states.get(target.name);
    const firstTokenMeanMs = state?.window.meanFirstTokenMs(this.clock.now()) ?? null;
    const merged = this.fleetHealth.merged(target.name, {
      score: state?.health.score ?? 100,
      firstTokenMeanMs,
      firstTokenSamples: state?.window.firstTokenSamples ?? 0,
    });
    return scoreTarget(target, policy, { health: merged.score, firstTokenP50Ms: merged.firstTokenMeanMs });
  };

  constructor(options: RouteSelectorOptions) {
    this.current = options.config;
    this.states = options.states;
    this.secrets = options.secrets;
    this.fleetFull = options.fleetFull;
    this.fleetHealth = options.fleetHealth;
    this.extraFilters = options.filters;
    this.clock = options.clock;
    this.random = options.random;
    this.weights = new WeightBook(options.config);
    this.buildFilters();
  }

  get config(): CompiledRouterConfig {
    return this.current;
  }

  /** A new config; a forced primary that no longer exists is cleared. */
  reload(config: CompiledRouterConfig): void {
    this.current = config;
    if (this.forced !== undefined && !config.targetsByName.has(this.forced)) this.forced = undefined;
    this.weights.reload(config);
    this.buildFilters();
  }

  /** The decision now; `options.filters` run after the selector's own. */
  decide(meta: RequestMeta, options: DecideOptions = {}): RoutingDecision {
    const extra = options.filters;
    const decideWith = (filters: readonly CandidateFilter[]) =>
      decideRoute(this.current, meta, {
        excludeTargets: options.excludeTargets,
        filters: extra === undefined || extra.length === 0 ? filters : [...filters, ...extra],
        forcedPrimary: options.forcedPrimary ?? this.forced,
        score: this.score,
        ...(options.stickyKey === undefined ? {} : { stickyKey: options.stickyKey }),
        random: options.random ?? this.random,
        weightsOf: options.weightsOf ?? this.weights.weightsOf,
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

  /** SPEC §3.3: no target that may serve the request can hold its input → a clear, non-retryable error. */
  assertContextFits(meta: RequestMeta): void {
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

  private buildFilters(): void {
    const base = [missingApiKeyFilter(this.secrets), contextWindowFilter(this.current.config.context_max_share), this.fleetFull.filter()];
    const o = this.current.config.overload;
    const overload = { firstTokenMs: o.first_token_ms, queue: o.queue };
    const live = (applyShare: boolean) => liveTargetFilter(this.states, this.clock, { overload, random: this.random, applyShare });
    this.filters = [...base, live(true), ...this.extraFilters];
    this.filtersWithoutShare = [...base, live(false), ...this.extraFilters];
  }
}
