export type NetworkState = 'ok' | 'checking' | 'local_fault';

/** What the caller does with one connect failure: charge the target now, hold the charge, or hold it and check the known-good endpoint. */
export type FailureVerdict = 'charge' | 'hold' | 'check';

/** A state change the caller acts on: charge what was held (`remote`), alert (`local_fault`), all clear (`recovered`). */
export type NetworkTransition = 'remote' | 'local_fault' | 'recovered' | null;

/**
 * "Is it me or them" (seed 003 §5.3), as a pure decision over an injected clock. The first
 * connect failure (refused, reset, DNS, connect timeout) after things were well is not charged
 * at once: it and the ones that follow are held while the known-good endpoint is checked. Any
 * upstream answer meanwhile, or the endpoint answering, says our network works (`remote`: charge
 * them); the endpoint failing too says the fault is ours (`local_fault`): nothing is charged
 * until the network is back, which any upstream answer or a passing re-check says
 * (`recovered`). After a `remote` verdict, for `windowMs`, single targets failing are charged
 * at once; a check starts again only when two targets (or the only one) fail within the window.
 */
export class NetworkFaultJudge {
  private current: NetworkState = 'ok';
  private readonly lastFailureAt = new Map<string, number>();
  private changedAt: number | undefined;
  /** Until then the network is known to work: failures of single targets are theirs. */
  private remoteUntil = Number.NEGATIVE_INFINITY;

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

  /** `targetCount`: targets configured (after a `remote` verdict a new check needs two of them failing, or the only one). */
  connectFailure(target: string, now: number, targetCount: number): FailureVerdict {
    this.lastFailureAt.set(target, now);
    if (this.current !== 'ok') return 'hold';
    if (now < this.remoteUntil) {
      let failing = 0;
      for (const [name, at] of this.lastFailureAt) {
        if (now - at <= this.windowMs) failing += 1;
        else this.lastFailureAt.delete(name);
      }
      if (failing < Math.min(2, targetCount)) return 'charge';
    }
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
    if (was === 'checking') this.remoteUntil = now + this.windowMs;
    return was === 'checking' ? 'remote' : 'recovered';
  }

  /** The known-good endpoint's answer (`reachable`) to a check started by `connectFailure` or a re-check. */
  checked(reachable: boolean, now: number): NetworkTransition {
    if (this.current === 'checking') {
      this.enter(reachable ? 'ok' : 'local_fault', now);
      if (reachable) this.remoteUntil = now + this.windowMs;
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
