/**
 * The router's own limit for one upstream attempt: one signal that fires when either the
 * time is up or the caller aborts, and a way to tell the two apart afterwards.
 */
export class AttemptDeadline {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private expired = false;
  private readonly onParentAbort = () => this.controller.abort(this.parent?.reason);

  constructor(
    readonly timeoutMs: number,
    private readonly parent?: AbortSignal,
  ) {
    this.signal = this.controller.signal;
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort(new Error(`attempt deadline of ${timeoutMs} ms passed`));
    }, timeoutMs);
    if (parent?.aborted) this.onParentAbort();
    else parent?.addEventListener('abort', this.onParentAbort, { once: true });
  }

  get timedOut(): boolean {
    return this.expired;
  }

  get callerAborted(): boolean {
    return this.parent?.aborted === true && !this.expired;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.parent?.removeEventListener('abort', this.onParentAbort);
  }
}
