import type { BreakerState } from '../admin/router-admin';
import { CanaryStatus } from '../canary/canary-status';
import { CircuitBreaker, type BreakerSettings } from '../breaker/circuit-breaker';
import type { RouterConfig, TargetConfig } from '../config/router-config.schema';
import { HealthScore } from '../health/health-score';
import type { FailureClass, HealthSettings } from '../health/health-settings';
import { SlidingWindow } from '../health/sliding-window';
import { RateWindow } from '../quota/rate-window';
import { RecoveryRamp, type RecoverySettings } from '../recovery/recovery-ramp';

/** What one finished attempt tells the target's state. */
export interface AttemptObservation {
  ok: boolean;
  failure?: FailureClass;
  latencyMs: number;
  firstTokenMs?: number;
  outputTokens?: number;
  /** From a 429's Retry-After: the target takes nothing until then. */
  retryAfterMs?: number;
}

/**
 * The live state of one target in this process: health score, passive window, breaker,
 * recovery ramp, minute quota window, in-flight count, operator flags.
 */
export class TargetState {
  readonly health: HealthScore;
  readonly breaker: CircuitBreaker;
  readonly ramp: RecoveryRamp;
  readonly window: SlidingWindow;
  readonly rate = new RateWindow();
  /** The business canaries' record: failing → no share (like an unhealthy target). */
  readonly canary = new CanaryStatus();
  inFlight = 0;
  drained = false;
  /** Until this time (ms) the target is rate-limiting us. */
  coolingUntil = 0;
  /** Set while active probes see a model still loading; cleared by the first success. */
  coldStart = false;

  constructor(
    settings: TargetStateSettings,
    /** Told when this process's own traffic opens or closes the breaker (the fleet hears of it from there). */
    private readonly onBreakerChange: (state: 'open' | 'closed') => void = () => undefined,
  ) {
    this.health = new HealthScore(settings.health);
    this.breaker = new CircuitBreaker(settings.breaker);
    this.ramp = new RecoveryRamp(settings.recovery);
    this.window = new SlidingWindow(settings.health.windowSize, settings.health.windowMs);
  }

  /** New health, breaker and recovery settings (config reload), keeping what was learned. */
  reconfigure(settings: TargetStateSettings): void {
    this.health.reconfigure(settings.health);
    this.breaker.reconfigure(settings.breaker);
    this.ramp.reconfigure(settings.recovery);
    this.window.setWindowMs(settings.health.windowMs);
  }

  /** A call is sent now, carrying about `tokens` tokens. */
  begin(now: number, tokens: number): void {
    this.inFlight += 1;
    this.breaker.admit(now);
    this.rate.add(now, tokens);
  }

  end(now: number, observation: AttemptObservation): void {
    this.release();
    this.observe(now, observation);
  }

  /** The call's slot is free again, with nothing learned (the caller aborted it). */
  release(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
  }

  /** The call found the model still loading: not a failure; the target takes no work until a probe answers. */
  endColdStart(): void {
    this.release();
    this.coldStart = true;
  }

  /** An outcome without an in-flight slot (active probes, bad output reported afterwards). */
  observe(now: number, observation: AttemptObservation): void {
    this.window.add({
      at: now,
      ok: observation.ok,
      latencyMs: observation.latencyMs,
      ...(observation.firstTokenMs === undefined ? {} : { firstTokenMs: observation.firstTokenMs }),
      ...(observation.outputTokens === undefined ? {} : { outputTokens: observation.outputTokens }),
    });
    if (observation.ok) {
      this.coldStart = false;
      this.health.recordSuccess();
      const before = this.breaker.state(now);
      const after = this.breaker.recordSuccess(now);
      if (before === 'half_open' && after === 'closed') this.onBreakerChange('closed');
      return;
    }
    const failure = observation.failure ?? 'unknown';
    if (failure === 'rate_limited') {
      this.coolingUntil = Math.max(this.coolingUntil, now + (observation.retryAfterMs ?? 1_000));
      return;
    }
    if (failure === 'bad_request') return;
    const lostHealth = this.health.recordFailure(failure, now);
    const before: BreakerState = this.breaker.state(now);
    const after = failure === 'bad_output' ? before : this.breaker.recordFailure(now);
    const opened = after === 'open' && before !== 'open';
    if (lostHealth || opened) this.ramp.trip(now);
    if (opened) this.onBreakerChange('open');
  }

  /** Another process opened this target's breaker: open here for the rest of its cooldown. */
  applyFleetBreakerOpen(now: number, cooldownLeftMs: number): boolean {
    if (!this.breaker.openFromFleet(now, cooldownLeftMs)) return false;
    this.ramp.trip(now);
    return true;
  }

  /** The process that probed this target closed its breaker: closed here too, without probing again. */
  applyFleetBreakerClose(now: number): boolean {
    if (this.breaker.state(now) === 'closed') return false;
    this.breaker.reset();
    return true;
  }
}

export interface TargetStateSettings {
  health: HealthSettings;
  breaker: BreakerSettings;
  recovery: RecoverySettings;
}

export function stateSettings(config: RouterConfig): TargetStateSettings {
  const h = config.health;
  const b = config.breaker;
  const r = config.recovery;
  return {
    health: {
      threshold: h.threshold,
      successGain: 10,
      failurePenalty: 30,
      badOutputPenalty: 15,
      consecutiveToZero: h.consecutive_failures_to_zero,
      classThresholds: h.class_thresholds,
      retryAfterMs: h.retry_after_ms,
      windowMs: h.window_ms,
      windowSize: 256,
    },
    breaker: {
      consecutiveFailures: b.consecutive_failures,
      consecutiveWindowMs: b.consecutive_window_ms,
      failureRate: b.failure_rate,
      rateWindowMs: b.rate_window_ms,
      minVolume: b.min_volume,
      cooldownMs: b.cooldown_ms,
      halfOpenProbes: b.half_open_probes,
    },
    recovery: { steps: r.steps, holdMs: r.hold_ms, switchCooldownMs: r.switch_cooldown_ms, maxStepPoints: r.max_step_points },
  };
}

/**
 * Every target's state, by name. A reload keeps the state of targets that still exist and
 * applies the new health, breaker and recovery settings to it.
 */
export class TargetStateRegistry {
  private states = new Map<string, TargetState>();

  constructor(
    config: RouterConfig,
    private readonly onBreakerChange: (target: string, state: 'open' | 'closed') => void = () => undefined,
  ) {
    this.reload(config);
  }

  get(name: string): TargetState | undefined {
    return this.states.get(name);
  }

  reload(config: RouterConfig): void {
    const settings = stateSettings(config);
    const next = new Map<string, TargetState>();
    for (const target of config.targets) {
      const existing = this.states.get(target.name);
      existing?.reconfigure(settings);
      // Canaries switched off: a target they held back is free again.
      if (config.canaries === null) existing?.canary.clear();
      next.set(target.name, existing ?? new TargetState(settings, (state) => this.onBreakerChange(target.name, state)));
    }
    this.states = next;
  }

  names(): string[] {
    return [...this.states.keys()];
  }
}

export type { TargetConfig };
