export interface RecoverySettings {
  /** Share of its traffic (percent) a recovered target gets, step by step (seed 003). */
  steps: readonly number[];
  /** Each step is held this long while the target stays healthy. */
  holdMs: number;
  /** After a target fails over, it gets no regular traffic back for this long (seed 000: 90 s). */
  switchCooldownMs: number;
  /** A share never moves by more than this many points at once (seed 004: 15). */
  maxStepPoints: number;
}

export const DEFAULT_RECOVERY_SETTINGS: RecoverySettings = { steps: [10, 30, 60, 100], holdMs: 30_000, switchCooldownMs: 90_000, maxStepPoints: 15 };

/**
 * The configured steps, with intermediate steps inserted wherever two of them are more
 * than `maxStepPoints` apart: [10, 30, 60, 100] with 15 → [10, 25, 30, 45, 60, 75, 90, 100].
 */
export function rampShares(steps: readonly number[], maxStepPoints: number): number[] {
  const shares: number[] = [];
  let previous = 0;
  for (const step of [...steps, 100]) {
    const target = Math.min(100, Math.max(previous, step));
    if (shares.length > 0) {
      while (target - previous > maxStepPoints) {
        previous += maxStepPoints;
        shares.push(previous);
      }
    }
    if (target !== previous || shares.length === 0) shares.push(target);
    previous = target;
  }
  return shares;
}

/**
 * Anti-flap for one target (SPEC §3.9): after a trip (breaker opened, health lost) the
 * target's share is 0 for the switch cooldown, then climbs the ramp one step per hold;
 * a new trip starts over. Pure; callers admit a call when `random() * 100 < share`.
 */
export class RecoveryRamp {
  private trippedAt: number | undefined;
  private shares: readonly number[];

  constructor(private settings: RecoverySettings = DEFAULT_RECOVERY_SETTINGS) {
    this.shares = rampShares(settings.steps, settings.maxStepPoints);
  }

  /** New settings (config reload); a target that is recovering stays on its way, on the new steps. */
  reconfigure(settings: RecoverySettings): void {
    this.settings = settings;
    this.shares = rampShares(settings.steps, settings.maxStepPoints);
  }

  trip(now: number): void {
    this.trippedAt = now;
  }

  /** Starts the climb now, at the first step, without the switch cooldown (a target whose fault just ended and was held at 0 meanwhile). */
  climbFrom(now: number): void {
    this.trippedAt = now - this.settings.switchCooldownMs;
  }

  get recovering(): boolean {
    return this.trippedAt !== undefined;
  }

  /** Percent of its normal traffic the target may take at `now`. */
  share(now: number): number {
    if (this.trippedAt === undefined) return 100;
    const sinceCooldown = now - this.trippedAt - this.settings.switchCooldownMs;
    if (sinceCooldown < 0) return 0;
    const index = Math.floor(sinceCooldown / this.settings.holdMs);
    if (index >= this.shares.length - 1) {
      this.trippedAt = undefined;
      return 100;
    }
    return this.shares[index]!;
  }
}
