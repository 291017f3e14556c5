export type NetworkState = 'ok' | 'checking' | 'local_fault';

/** What the caller does with one connect failure: charge the target now, hold the charge, or hold it and check the known-good endpoint. */
export type FailureVerdict = 'charge' | 'hold' | 'check';

/** A state change the caller acts on: charge what was held (`remote`), alert (`local_fault`), all clear (`recovered`). */
export type NetworkTransition = 'remote' | 'local_fault' | 'recovered' | null;

/**
 * "Is it me or them" (seed 003 §5.3), as a pure decision over an injected clock. A target's
 * connect failure (refused, reset, DNS, connect timeout) is charged to it as usual, unless
 * since the last upstream answer at least two targets (or the only one there is) failed that
 * way within `windowMs`. Then the charges are held and the known-good endpoint is
 * checked: it answers → the targets really are down (`remote`, charge them); it fails too →
 * the fault is ours (`local_fault`): nothing is charged until the network is back, which any
 * upstream answer or a passing re-check says (`recovered`).
 */
export class NetworkFaultJudge {
  private current: NetworkState = 'ok';
  private readonly lastFailureAt = new Map<string, number>();
  private changedAt: number | undefined;

  constructor(private windowMs: number) {}

  setWindow(windowMs: number): void {
    this.windowMs = windowMs;
  }

  get state(): NetworkState {
    return this.current;
  }

  /** When the current non-ok state began. */
  get since(): number | undefined {
    return this.current === 'ok' ? undefined : this.changedAt;
  }

  /** `targetCount`: targets configured (the trigger needs two of them failing, or the only one). */
  connectFailure(target: string, now: number, targetCount: number): FailureVerdict {
    this.lastFailureAt.set(target, now);
    if (this.current !== 'ok') return 'hold';
    let failing = 0;
    for (const [name, at] of this.lastFailureAt) {
      if (now - at <= this.windowMs) failing += 1;
      else this.lastFailureAt.delete(name);
    }
    if (failing < Math.min(2, targetCount)) return 'charge';
    this.enter('checking', now);
    return 'check';
  }

  /** An upstream answered: whatever it was, our network works. */
  success(now: number): NetworkTransition {
    // Failures before an answer are not part of the same outage.
    if (this.lastFailureAt.size > 0) this.lastFailureAt.clear();
    if (this.current === 'ok') return null;
    const was = this.current;
    this.enter('ok', now);
    return was === 'checking' ? 'remote' : 'recovered';
  }

  /** The known-good endpoint's answer (`reachable`) to a check started by `connectFailure` or a re-check. */
  checked(reachable: boolean, now: number): NetworkTransition {
    if (this.current === 'checking') {
      this.enter(reachable ? 'ok' : 'local_fault', now);
      return reachable ? 'remote' : 'local_fault';
    }
    if (this.current === 'local_fault' && reachable) {
      this.enter('ok', now);
      this.lastFailureAt.clear();
      return 'recovered';
    }
    return null;
  }

  /** Targets with a connect failure within the window (the ones an outage of ours made look down). */
  recentlyFailed(now: number): string[] {
    return [...this.lastFailureAt].filter(([, at]) => now - at <= this.windowMs).map(([name]) => name);
  }

  private enter(state: NetworkState, now: number): void {
    this.current = state;
    this.changedAt = now;
  }
}
