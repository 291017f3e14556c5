import { describeError, type Logger } from '@switchyard/observability';

/** How often the same connection error is logged again while it repeats (a reconnect loop). */
export const CONNECTION_ERROR_LOG_INTERVAL_MS = 30_000;

/**
 * Decides which repeats of an error to log: the first of each message, then at most one per
 * interval, telling how many were left out meanwhile.
 */
export class ErrorLogThrottle {
  private readonly seen = new Map<string, { loggedAt: number; suppressed: number }>();

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number,
  ) {}

  /** `undefined`: leave this one out; a number: log it, with this many left out since the last. */
  admit(key: string): number | undefined {
    const now = this.now();
    const entry = this.seen.get(key);
    if (entry && now - entry.loggedAt < this.intervalMs) {
      entry.suppressed += 1;
      return undefined;
    }
    const suppressed = entry?.suppressed ?? 0;
    this.seen.set(key, { loggedAt: now, suppressed: 0 });
    return suppressed;
  }
}

/**
 * Logs an emitter's `error` events (a Redis connection, a BullMQ queue) as JSON warnings,
 * throttled. Without a listener, ioredis prints "[ioredis] Unhandled error event" and BullMQ's
 * queues `console.error` the error: bare multi-line text on stderr beside our JSON.
 */
export function logConnectionErrors(
  emitter: { on(event: 'error', listener: (error: unknown) => void): unknown },
  logger: Logger,
  fields: Record<string, unknown>,
  throttle: ErrorLogThrottle = new ErrorLogThrottle(CONNECTION_ERROR_LOG_INTERVAL_MS, Date.now),
): void {
  emitter.on('error', (error: unknown) => {
    const message = describeError(error);
    const suppressed = throttle.admit(message);
    if (suppressed === undefined) return;
    logger.warn({ ...fields, err: message, ...(suppressed > 0 ? { repeats_not_logged: suppressed } : {}) }, 'connection error');
  });
}

/** A `TaskQueues` error callback: each role queue's errors through `logConnectionErrors`' throttle. */
export function queueErrorLogger(logger: Logger): (role: string, error: unknown) => void {
  const throttle = new ErrorLogThrottle(CONNECTION_ERROR_LOG_INTERVAL_MS, Date.now);
  const log = logger.child({ component: 'queue' });
  return (role, error) => {
    const message = describeError(error);
    const suppressed = throttle.admit(`${role}\u0000${message}`);
    if (suppressed !== undefined) log.warn({ queue: role, err: message, ...(suppressed > 0 ? { repeats_not_logged: suppressed } : {}) }, 'queue connection error');
  };
}
