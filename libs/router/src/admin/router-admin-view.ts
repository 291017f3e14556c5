import type { RequestMeta } from '@switchyard/contracts';
import type { Logger } from '@switchyard/observability';
import type { CanaryCaseResult } from '../canary/canary-verdict';
import type { Clock } from '../clock';
import type { FailureClass } from '../health/health-settings';
import type { RouteSelector } from '../routing/route-selector';
import { NoEligibleTargetError } from '../routing/no-eligible-target.error';
import type { TargetStateRegistry } from '../state/target-state';
import type { WeightChangeEntry } from '../weights/weight-book';
import type { DecisionExplanation, RouterAdmin, TargetSnapshot } from './router-admin';
import { explainDecision, snapshotTarget, UnknownTargetError } from './router-admin.views';

/**
 * What operators and background work see and change: snapshots, explanations, drain / enable /
 * force primary, probe results, bad output reported afterwards, and breakers shared with the fleet.
 */
export class RouterAdminView implements RouterAdmin {
  private readonly breakerListeners = new Set<(target: string, cooldownLeftMs: number) => void>();
  private readonly closeListeners = new Set<(target: string) => void>();

  constructor(
    private readonly selector: RouteSelector,
    private readonly states: TargetStateRegistry,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

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

  /**
   * One round of business canaries on a target. Failing → it loses its share (the live filter
   * drops it) and the recovery ramp is tripped; a passing round afterwards → it climbs the ramp
   * from its first step. Each change is one structured log line with the failing cases.
   */
  recordCanaryRound(targetName: string, results: readonly CanaryCaseResult[]): void {
    const state = this.states.get(targetName);
    const canaries = this.selector.config.config.canaries;
    if (state === undefined || canaries === null) return;
    const now = this.clock.now();
    const transition = state.canary.recordRound(now, results, canaries.rounds_to_fail);
    if (transition === 'failing') {
      state.ramp.trip(now);
      this.logger.warn(
        { event: 'canary_failing', target: targetName, rounds: canaries.rounds_to_fail, failures: state.canary.snapshot().failures },
        'target fails its business canaries: it takes no traffic until a round passes',
      );
    } else if (transition === 'recovered') {
      state.ramp.climbFrom(now);
      this.logger.info({ event: 'canary_recovered', target: targetName }, 'target passes its business canaries again: its share climbs the recovery ramp');
    }
  }

  /** One dynamic-weights round from this process's passive windows; every change is a decision log line. */
  rebalanceWeights(): WeightChangeEntry[] {
    const config = this.selector.config;
    const now = this.clock.now();
    const changes = this.selector.weights.rebalance(
      (name) => {
        const stats = this.states.get(name)!.window.stats(now);
        const price = config.targetsByName.get(name)!.cost_per_1k_tokens;
        return { requests: stats.requests, successRate: stats.successRate, latencyP50Ms: stats.latencyMs.p50, price: price.input + price.output };
      },
      config.config.dynamic_weights,
      now,
    );
    for (const change of changes) {
      this.logger.info(
        {
          event: 'weight_changed',
          rule: change.rule,
          target: change.target,
          from: change.from,
          to: change.to,
          desired: change.desired,
          score: change.score.score,
          success_rate: change.score.successRate,
          latency_p50_ms: change.score.latencyP50Ms,
          price_per_1k: change.score.price,
        },
        'routing decision: dynamic weight changed',
      );
    }
    return changes;
  }

  /** Tells `listener` whenever this process's traffic opens a target's breaker (for the fleet). Returns the unsubscribe. */
  onBreakerOpen(listener: (target: string, cooldownLeftMs: number) => void): () => void {
    this.breakerListeners.add(listener);
    return () => this.breakerListeners.delete(listener);
  }

  /** Tells `listener` whenever this process's half-open probes close a target's breaker (for the fleet). */
  onBreakerClose(listener: (target: string) => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /**
   * A breaker opened in another process: it is open here too, so no call here pays the
   * failures again. The opener probes it after its cooldown and tells the fleet how that went;
   * here it stays open one cooldown longer, and half-opens by itself only if the opener goes
   * silent (died), so recovery is decided once for the fleet. Unknown targets are ignored.
   */
  applyFleetBreakerOpen(target: string, cooldownLeftMs: number): void {
    const state = this.states.get(target);
    if (state === undefined || cooldownLeftMs <= 0) return;
    const followerMs = cooldownLeftMs + this.selector.config.config.breaker.cooldown_ms;
    if (state.applyFleetBreakerOpen(this.clock.now(), followerMs)) {
      this.logger.warn({ target, cooldown_left_ms: followerMs }, 'breaker opened by another process of the fleet; open here too while that process probes it');
    }
  }

  /** The process that probed `target` found it healthy and closed its breaker: closed here too. */
  applyFleetBreakerClose(target: string): void {
    const state = this.states.get(target);
    if (state === undefined) return;
    if (state.applyFleetBreakerClose(this.clock.now())) this.logger.warn({ target }, 'breaker closed by the process of the fleet that probed it; closed here too');
  }


  snapshot(): TargetSnapshot[] {
    const now = this.clock.now();
    return this.selector.config.targets.map((target) =>
      snapshotTarget(target, this.states.get(target.name)!, now, this.selector.config.config, this.selector.forced === target.name, this.selector.weights.viewOf(target.name)),
    );
  }

  explain(meta: RequestMeta): DecisionExplanation {
    const byName = this.selector.config.targetsByName;
    try {
      return explainDecision(this.selector.decide(meta), byName, this.selector.score);
    } catch (error) {
      if (error instanceof NoEligibleTargetError) return explainDecision(error.explanation, byName, this.selector.score, error.message);
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
    this.selector.forced = target ?? undefined;
    this.logger.warn({ target }, target === null ? 'forced primary cleared' : 'forced primary set by an operator');
  }

  // ---- internals ----

  /** This process's own traffic opened or closed `target`'s breaker: tell the listeners (the fleet). */
  breakerChanged(target: string, state: 'open' | 'closed'): void {
    const health = this.states.get(target)?.health.score;
    if (state === 'open') this.logger.warn({ target, breaker: 'open', health_score: health, reason: 'failures crossed the breaker threshold' }, 'breaker opened');
    else this.logger.info({ target, breaker: 'closed', health_score: health, reason: 'a half-open trial call succeeded' }, 'breaker closed');
    if (state === 'closed') {
      for (const listener of this.closeListeners) {
        try {
          listener(target);
        } catch (error) {
          this.logger.error({ err: error, target }, 'breaker listener failed');
        }
      }
      return;
    }
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
}
