import { countsAgainstHealth, DEFAULT_HEALTH_SETTINGS, type FailureClass, type HealthSettings } from './health-settings';

/**
 * The health score of one target (SPEC §3.3): success +10, failure −30, three consecutive
 * failures → 0, and per failure class its own consecutive threshold. Below the threshold
 * the target is excluded until `retryAfterMs` after its last failure, when one trial call
 * may go through; a success there lifts the score again.
 */
export class HealthScore {
  private value = 100;
  private consecutive = 0;
  private readonly consecutiveByClass = new Map<FailureClass, number>();
  private lastFailureAt: number | undefined;
  private lastFailure: FailureClass | undefined;

  constructor(private settings: HealthSettings = DEFAULT_HEALTH_SETTINGS) {}

  /** New settings (config reload); the score and the streaks carry over. */
  reconfigure(settings: HealthSettings): void {
    this.settings = settings;
  }

  get score(): number {
    return this.value;
  }

  get consecutiveFailures(): number {
    return this.consecutive;
  }

  get lastFailureClass(): FailureClass | undefined {
    return this.lastFailure;
  }

  recordSuccess(): void {
    this.value = Math.min(100, this.value + this.settings.successGain);
    this.consecutive = 0;
    this.consecutiveByClass.clear();
  }

  /** Returns true when this failure pushed the target below the threshold. */
  recordFailure(failure: FailureClass, now: number): boolean {
    if (!countsAgainstHealth(failure)) return false;
    const wasHealthy = this.value >= this.settings.threshold;
    this.lastFailureAt = now;
    this.lastFailure = failure;
    const ofClass = (this.consecutiveByClass.get(failure) ?? 0) + 1;
    this.consecutiveByClass.set(failure, ofClass);
    const classLimit = this.settings.classThresholds[failure];
    if (failure === 'bad_output') {
      // Bad output is judged on its own threshold only; it does not feed the generic streak.
      this.value = Math.max(0, this.value - this.settings.badOutputPenalty);
    } else {
      this.consecutive += 1;
      this.value = Math.max(0, this.value - this.settings.failurePenalty);
      if (this.consecutive >= this.settings.consecutiveToZero) this.value = 0;
    }
    if (classLimit !== undefined && ofClass >= classLimit) this.value = 0;
    return wasHealthy && this.value < this.settings.threshold;
  }

  /** A passing active probe: evidence of life, not of good answers, so it only clears the streak. */
  recordProbeSuccess(): void {
    this.consecutive = 0;
    this.consecutiveByClass.delete('network');
    this.consecutiveByClass.delete('timeout');
    if (this.value < this.settings.threshold) this.value = this.settings.threshold;
  }

  /** The failures were not the target's (our own network was down): back to full health, no streaks. */
  forgive(): void {
    this.value = 100;
    this.consecutive = 0;
    this.consecutiveByClass.clear();
    this.lastFailureAt = undefined;
    this.lastFailure = undefined;
  }

  /** Excluded: below threshold and the last failure is recent. After `retryAfterMs`, a trial may pass. */
  isExcluded(now: number): boolean {
    if (this.value >= this.settings.threshold) return false;
    return this.lastFailureAt !== undefined && now - this.lastFailureAt < this.settings.retryAfterMs;
  }

  isBelowThreshold(): boolean {
    return this.value < this.settings.threshold;
  }
}
