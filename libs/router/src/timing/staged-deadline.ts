export type TimeoutStage = 'connect' | 'first_token' | 'total';

export interface StageLimits {
  /** Until the connection is established (TCP, and TLS or the proxy tunnel); not until the response headers. */
  connectMs: number;
  /** Until the first streamed token, counted from the start: waiting for the response headers is part of it. */
  firstTokenMs: number;
  /** The whole attempt. */
  totalMs: number;
}

/**
 * The router's three timeouts for one streamed attempt (SPEC §3.6), as one abort signal:
 * connect until the connection is up, first token until the first content (the response
 * headers included: streaming APIs, loaded GPU servers and buffering proxies send them with
 * the first token), total for the whole answer. The caller's signal aborts it too, and
 * afterwards tells which of the two fired.
 */
export class StagedDeadline {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly started = performance.now();
  /** One timer per attempt: it fires at `firesAt`; a later stage only moves `dueAt` (see `arm`). */
  private timer: NodeJS.Timeout | undefined;
  private firesAt = 0;
  private dueAt = 0;
  private stage: TimeoutStage = 'connect';
  private expiredStage: TimeoutStage | undefined;
  /** The limit the armed timer enforces: before the connection is up, the first-token or total limit may be the tighter one. */
  private binding: TimeoutStage = 'connect';
  private readonly onParentAbort = () => this.controller.abort(this.parent?.reason);

  constructor(
    private readonly limits: StageLimits,
    private readonly parent?: AbortSignal,
  ) {
    this.signal = this.controller.signal;
    this.binding = limits.connectMs < limits.firstTokenMs && limits.connectMs < limits.totalMs ? 'connect' : limits.firstTokenMs <= limits.totalMs ? 'first_token' : 'total';
    this.arm(Math.min(limits.connectMs, limits.firstTokenMs, limits.totalMs));
    if (parent?.aborted) this.onParentAbort();
    else parent?.addEventListener('abort', this.onParentAbort, { once: true });
  }

  /** The connection is established: now waiting for the first token (and the headers before it). */
  connected(): void {
    if (this.stage !== 'connect') return;
    this.stage = 'first_token';
    this.binding = this.limits.firstTokenMs <= this.limits.totalMs ? 'first_token' : 'total';
    this.arm(Math.min(this.limits.firstTokenMs, this.limits.totalMs) - this.elapsed());
  }

  /** The first token arrived: the rest of the total budget applies. */
  firstToken(): void {
    if (this.stage === 'total') return;
    this.stage = 'total';
    this.binding = 'total';
    this.arm(this.limits.totalMs - this.elapsed());
  }

  get timedOut(): boolean {
    return this.expiredStage !== undefined;
  }

  /** Which stage ran out, for the error message. */
  get timedOutStage(): TimeoutStage | undefined {
    return this.expiredStage;
  }

  get callerAborted(): boolean {
    return this.parent?.aborted === true && this.expiredStage === undefined;
  }

  /** The limit of the stage that ran out, in ms. */
  limitOf(stage: TimeoutStage): number {
    return stage === 'connect' ? this.limits.connectMs : stage === 'first_token' ? this.limits.firstTokenMs : this.limits.totalMs;
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.parent?.removeEventListener('abort', this.onParentAbort);
  }

  /**
   * The binding limit now ends `ms` from now. Stages only move forward, so the new end is
   * normally later than the one the pending timer fires at: then that timer stays and re-arms
   * itself for the rest when it fires (one setTimeout per attempt instead of one per stage; a
   * call that finishes in time never re-arms). An earlier end replaces the timer.
   */
  private arm(ms: number): void {
    const now = performance.now();
    this.dueAt = now + Math.max(0, ms);
    if (this.timer !== undefined && this.firesAt <= this.dueAt) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.schedule(this.dueAt - now);
  }

  private schedule(ms: number): void {
    this.firesAt = performance.now() + ms;
    this.timer = setTimeout(this.onTimer, Math.max(0, ms));
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    // Node's timers run on a millisecond clock: within a millisecond of the end counts as the end.
    const left = this.dueAt - performance.now();
    if (left >= 1) {
      this.schedule(left);
      return;
    }
    this.expiredStage = this.binding;
    this.controller.abort(new Error(`${this.binding} timeout of ${this.limitOf(this.binding)} ms passed`));
  };

  private elapsed(): number {
    return performance.now() - this.started;
  }
}

/**
 * The total budget of one attempt: first-token time plus the answer at the target's speed,
 * with 50 % slack, never above the target's own timeout nor the call's remaining time.
 */
export function attemptTotalMs(
  target: { first_token_timeout_ms: number; timeout_ms: number; tokens_per_second: number },
  maxTokens: number | undefined,
  remainingMs: number,
  measuredTokensPerSecond: number | null,
): number {
  const speed = Math.max(target.tokens_per_second, measuredTokensPerSecond ?? 0);
  const generation = maxTokens === undefined ? target.timeout_ms : ((maxTokens / speed) * 1000 * 3) / 2;
  return Math.max(1, Math.floor(Math.min(target.timeout_ms, target.first_token_timeout_ms + generation, remainingMs)));
}
