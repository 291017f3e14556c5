import { isCallFailure, isVerdict, type CanaryCallFailure, type CanaryCaseResult, type CanaryVerdict } from './canary-verdict';

/** What `/admin/targets` shows of a target's canaries. */
export interface CanarySnapshot {
  failing: boolean;
  /** Rounds in a row with a failed case. */
  failingRounds: number;
  /** Epoch ms of the last round with a verdict. */
  checkedAt: number | null;
  passed: number;
  /** The failed cases of the last round: name, language, what was expected, what came back. */
  failures: Omit<CanaryVerdict, 'passed'>[];
  /** Cases of the last round whose call got no answer (not counted either way). */
  errors: CanaryCallFailure[];
}

export type CanaryTransition = 'failing' | 'recovered' | null;

/**
 * One target's canary record (seed 004 §4.1). A round in which any case fails counts; after
 * `roundsToFail` such rounds in a row the target is failing (it loses its share); the first
 * round in which every case passes ends that. A round in which no case got an answer changes
 * nothing: an unreachable target is the health checks' business. Pure.
 */
export class CanaryStatus {
  private failingRounds = 0;
  private isFailing = false;
  private checkedAt: number | null = null;
  private last: CanaryCaseResult[] = [];

  get failing(): boolean {
    return this.isFailing;
  }

  recordRound(now: number, results: readonly CanaryCaseResult[], roundsToFail: number): CanaryTransition {
    this.last = [...results];
    const verdicts = results.filter(isVerdict);
    if (verdicts.length === 0) return null;
    this.checkedAt = now;
    if (verdicts.every((verdict) => verdict.passed)) {
      this.failingRounds = 0;
      if (!this.isFailing) return null;
      this.isFailing = false;
      return 'recovered';
    }
    this.failingRounds += 1;
    if (this.isFailing || this.failingRounds < roundsToFail) return null;
    this.isFailing = true;
    return 'failing';
  }

  /** The canaries were switched off (config reload): nothing holds the target back any more. */
  clear(): void {
    this.failingRounds = 0;
    this.isFailing = false;
    this.checkedAt = null;
    this.last = [];
  }

  snapshot(): CanarySnapshot {
    const verdicts = this.last.filter(isVerdict);
    return {
      failing: this.isFailing,
      failingRounds: this.failingRounds,
      checkedAt: this.checkedAt,
      passed: verdicts.filter((verdict) => verdict.passed).length,
      failures: verdicts.filter((verdict) => !verdict.passed).map(({ passed: _passed, ...failure }) => failure),
      errors: this.last.filter(isCallFailure),
    };
  }
}
