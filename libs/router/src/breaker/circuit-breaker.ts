import type { BreakerState } from '../admin/router-admin';

export interface BreakerSettings {
  /** Opens after this many consecutive failures … */
  consecutiveFailures: number;
  /** … that all fell within this span. */
  consecutiveWindowMs: number;
  /** Opens when more than this share of calls failed within `rateWindowMs` … */
  failureRate: number;
  rateWindowMs: number;
  /** … and at least this many calls were made in that window. */
  minVolume: number;
  /** Open → half-open after this long. */
  cooldownMs: number;
  /** Half-open lets this many probe calls through; all must succeed to close. */
  halfOpenProbes: number;
}

export const DEFAULT_BREAKER_SETTINGS: BreakerSettings = {
  consecutiveFailures: 10,
  consecutiveWindowMs: 30_000,
  failureRate: 0.5,
  rateWindowMs: 60_000,
  minVolume: 20,
  cooldownMs: 30_000,
  halfOpenProbes: 3,
};

const BUCKETS = 6;

/**
 * One target's circuit breaker (SPEC §3.7): closed → open (N consecutive failures within
 * a span, or a failure rate above the limit with enough volume) → half-open after the
 * cooldown, letting a few probe calls through → closed when they all succeed, open again
 * on the first failure. Pure state driven by an injected time.
 */
export class CircuitBreaker {
  private current: BreakerState = 'closed';
  private openedAt = 0;
  private probesAdmitted = 0;
  private probesSucceeded = 0;
  /** Times of the current failure streak, newest last, at most `consecutiveFailures`. */
  private streak: number[] = [];
  private readonly bucketStart: number[] = new Array<number>(BUCKETS).fill(-1);
  private readonly bucketOk: number[] = new Array<number>(BUCKETS).fill(0);
  private readonly bucketFail: number[] = new Array<number>(BUCKETS).fill(0);
  private bucketMs: number;

  constructor(private settings: BreakerSettings = DEFAULT_BREAKER_SETTINGS) {
    this.bucketMs = bucketMsFor(settings);
  }

  /**
   * New settings (config reload). The state, its open time and the failure streak carry over
   * (an open breaker cools down by the new cooldown); the failure-rate buckets start afresh
   * when the rate window changed, since their spans no longer fit it.
   */
  reconfigure(settings: BreakerSettings): void {
    const rateWindowChanged = settings.rateWindowMs !== this.settings.rateWindowMs;
    this.settings = settings;
    if (this.streak.length > settings.consecutiveFailures) this.streak = this.streak.slice(-settings.consecutiveFailures);
    if (rateWindowChanged) {
      this.bucketMs = bucketMsFor(settings);
      this.clearBuckets();
    }
  }

  /** The state at `now` (open turns half-open once the cooldown has passed). */
  state(now: number): BreakerState {
    if (this.current === 'open' && now - this.openedAt >= this.settings.cooldownMs) {
      this.current = 'half_open';
      this.probesAdmitted = 0;
      this.probesSucceeded = 0;
    }
    return this.current;
  }

  /** Whether a call may go through now. Does not reserve a probe slot: `admit` does. */
  allows(now: number): boolean {
    const state = this.state(now);
    return state === 'closed' || (state === 'half_open' && this.probesAdmitted < this.settings.halfOpenProbes);
  }

  /** A call is about to be sent; in half-open it takes one probe slot. */
  admit(now: number): void {
    if (this.state(now) === 'half_open') this.probesAdmitted += 1;
  }

  /** Returns the new state. */
  recordSuccess(now: number): BreakerState {
    this.count(now, true);
    this.streak = [];
    if (this.state(now) === 'half_open') {
      this.probesSucceeded += 1;
      if (this.probesSucceeded >= this.settings.halfOpenProbes) this.close();
    }
    return this.current;
  }

  /** Returns the new state. */
  recordFailure(now: number): BreakerState {
    this.count(now, false);
    const state = this.state(now);
    if (state === 'half_open') {
      this.open(now);
      return this.current;
    }
    if (state === 'open') return state;
    this.streak.push(now);
    if (this.streak.length > this.settings.consecutiveFailures) this.streak.shift();
    const streakTripped =
      this.streak.length >= this.settings.consecutiveFailures && now - this.streak[0]! <= this.settings.consecutiveWindowMs;
    if (streakTripped || this.rateTripped(now)) this.open(now);
    return this.current;
  }

  /** Operator action or reload: back to closed with clean counters. */
  reset(): void {
    this.close();
  }

  /**
   * Another process's breaker on this target opened: open here too, for the rest of its
   * cooldown (`cooldownLeftMs`, measured there, so clock skew between hosts does not matter).
   * A breaker already open longer keeps its own cooldown. Returns whether anything changed.
   */
  openFromFleet(now: number, cooldownLeftMs: number): boolean {
    const openedAt = now - Math.max(0, this.settings.cooldownMs - cooldownLeftMs);
    if (this.state(now) === 'open' && this.openedAt >= openedAt) return false;
    this.open(openedAt);
    return true;
  }

  /** Time left before an open breaker half-opens; 0 when not open. */
  cooldownLeft(now: number): number {
    return this.state(now) === 'open' ? Math.max(0, this.openedAt + this.settings.cooldownMs - now) : 0;
  }

  private open(now: number): void {
    this.current = 'open';
    this.openedAt = now;
    this.streak = [];
  }

  private close(): void {
    this.current = 'closed';
    this.streak = [];
    this.clearBuckets();
  }

  private clearBuckets(): void {
    this.bucketStart.fill(-1);
    this.bucketOk.fill(0);
    this.bucketFail.fill(0);
  }

  private count(now: number, ok: boolean): void {
    const start = now - (now % this.bucketMs);
    const index = Math.floor(now / this.bucketMs) % BUCKETS;
    if (this.bucketStart[index] !== start) {
      this.bucketStart[index] = start;
      this.bucketOk[index] = 0;
      this.bucketFail[index] = 0;
    }
    if (ok) this.bucketOk[index]! += 1;
    else this.bucketFail[index]! += 1;
  }

  private rateTripped(now: number): boolean {
    let ok = 0;
    let fail = 0;
    for (let i = 0; i < BUCKETS; i++) {
      if (this.bucketStart[i]! < 0 || now - this.bucketStart[i]! >= this.settings.rateWindowMs) continue;
      ok += this.bucketOk[i]!;
      fail += this.bucketFail[i]!;
    }
    const total = ok + fail;
    return total >= this.settings.minVolume && fail / total > this.settings.failureRate;
  }
}

function bucketMsFor(settings: BreakerSettings): number {
  return Math.max(1, Math.ceil(settings.rateWindowMs / BUCKETS));
}
