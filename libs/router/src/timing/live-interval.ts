/**
 * Runs `round` over and over, `delayMs()` after the end of the previous one; the delay is read
 * before each wait, so a config reload changes it from the next round on. A failing round goes
 * to `onError` and the next one still comes. The timer is unref'd; `stop()` ends it.
 */
export class LiveInterval {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly delayMs: () => number,
    private readonly round: () => Promise<void> | void,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      void (async () => {
        try {
          await this.round();
        } catch (error) {
          this.onError(error);
        }
        if (this.running) this.schedule();
      })();
    }, this.delayMs());
    this.timer.unref();
  }
}
