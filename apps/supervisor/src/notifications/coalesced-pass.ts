/**
 * A background pass that runs on a timer and on request, one at a time: requests that come
 * while a pass runs fold into a single pass after it. Errors go to `onError`; the timer goes on.
 */
export class CoalescedPass {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight;
  }

  /** Runs a pass now, or once more after the running one. Resolves when that pass has run. */
  request(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.inFlight) {
      this.again = true;
      return this.inFlight.then(() => this.inFlight ?? undefined);
    }
    const run = this.pass()
      .then(() => undefined)
      .catch((error: unknown) => this.onError(error))
      .finally(() => {
        this.inFlight = undefined;
        if (this.again) {
          this.again = false;
          void this.request();
        }
      });
    this.inFlight = run;
    return run;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.request().finally(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }
}
