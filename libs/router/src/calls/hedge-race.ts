/** Schedules `run` after `ms`; returns its cancel. Injected so the race is testable without waiting. */
export type ScheduleTimer = (ms: number, run: () => void) => () => void;

export const realTimer: ScheduleTimer = (ms, run) => {
  const timer = setTimeout(run, ms);
  // Never what keeps a process alive: the calls it belongs to do that.
  timer.unref();
  return () => clearTimeout(timer);
};

/** What one leg of the race is given: its own abort, and the two moments the race listens for. */
export interface HedgeLeg {
  readonly index: 0 | 1;
  /** Aborted when the other leg won: the attempt must stop (the upstream sees the client go). */
  readonly signal: AbortSignal;
  /** The leg's first content token arrived. */
  firstToken(): void;
  /** Whether this leg's pieces may reach a streaming caller (it won). */
  mayStream(): boolean;
}

export interface HedgeRaceOptions<T> {
  hedgeAfterMs: number;
  /** Streaming callers: the first token decides the winner. Otherwise the first successful answer does. */
  decideOnFirstToken: boolean;
  /** The first attempt. */
  primary(leg: HedgeLeg): Promise<T>;
  /** The second attempt, on another target; resolves to undefined when none may start (no candidate, no slot, no budget). */
  hedge(leg: HedgeLeg): Promise<T | undefined>;
  succeeded(result: T): boolean;
  timer: ScheduleTimer;
}

export interface HedgeRaceResult<T> {
  /** Each leg that ran, primary first; `cancelled` when it lost and was aborted. */
  legs: { index: 0 | 1; result: T; cancelled: boolean }[];
  /** Index of the winning leg, if one answered. */
  winner: 0 | 1 | undefined;
  hedged: boolean;
}

/**
 * A hedged attempt (seed 003 §5.1): the primary runs; if it has no first token after
 * `hedgeAfterMs`, a second attempt starts elsewhere while the first goes on. The first answer
 * (first token for a streaming caller) wins and the other leg is aborted; the race ends when
 * every started leg has settled, so both are recorded. Deadlines are the legs' own.
 */
export function hedgeRace<T>(options: HedgeRaceOptions<T>): Promise<HedgeRaceResult<T>> {
  const controllers = [new AbortController(), new AbortController()] as const;
  const cancelled = [false, false];
  const settled: { index: 0 | 1; result: T }[] = [];
  let winner: 0 | 1 | undefined;
  let primaryFirstToken = false;
  let hedgeStarted = false;
  let running = 1;

  return new Promise((resolve, reject) => {
    const finish = () => {
      cancelTimer();
      const legs = settled.sort((a, b) => a.index - b.index).map((leg) => ({ ...leg, cancelled: cancelled[leg.index]! }));
      resolve({ legs, winner, hedged: hedgeStarted });
    };
    const win = (index: 0 | 1) => {
      if (winner !== undefined) return;
      winner = index;
      cancelTimer();
      const other = index === 0 ? 1 : 0;
      if (other === 0 || hedgeStarted) {
        cancelled[other] = true;
        controllers[other].abort(new Error('the other hedged attempt answered first'));
      }
    };
    const leg = (index: 0 | 1): HedgeLeg => ({
      index,
      signal: controllers[index].signal,
      firstToken: () => {
        if (index === 0) primaryFirstToken = true;
        if (options.decideOnFirstToken && hedgeStarted) win(index);
      },
      // Before a hedge exists the primary streams as any attempt does.
      mayStream: () => (hedgeStarted ? winner === index : index === 0),
    });
    const settle = (index: 0 | 1, result: T) => {
      settled.push({ index, result });
      running -= 1;
      if (options.succeeded(result) && !cancelled[index]) win(index);
      if (index === 0 && !hedgeStarted) cancelTimer();
      if (running === 0) finish();
    };
    const run = (index: 0 | 1, attempt: Promise<T | undefined>) =>
      attempt.then(
        (result) => {
          if (result === undefined) {
            // No hedge could start: the primary alone decides.
            running -= 1;
            hedgeStarted = false;
            if (running === 0) finish();
            return;
          }
          settle(index, result);
        },
        (error: unknown) => {
          cancelTimer();
          for (const controller of controllers) controller.abort(error);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );

    let cancelTimer: () => void = () => undefined;
    cancelTimer = options.timer(options.hedgeAfterMs, () => {
      cancelTimer = () => undefined;
      if (primaryFirstToken || running === 0 || winner !== undefined) return;
      hedgeStarted = true;
      running += 1;
      void run(1, options.hedge(leg(1)));
    });
    void run(0, options.primary(leg(0)));
  });
}
