export interface BackoffSettings {
  baseMs: number;
  /** Upper bound of the exponential part (before jitter). */
  maxMs: number;
  jitterMs: number;
}

export const DEFAULT_BACKOFF_SETTINGS: BackoffSettings = { baseMs: 1_000, maxMs: 8_000, jitterMs: 500 };

/**
 * Delay before retry number `retry` (0-based): base × 2^retry, capped, plus 0..jitter ms
 * (seed 004: 1 s × 2^n + 0–500 ms). An upstream's Retry-After is a floor, not a suggestion.
 */
export function backoffDelayMs(retry: number, settings: BackoffSettings, random: () => number, retryAfterMs?: number): number {
  const exponential = Math.min(settings.maxMs, settings.baseMs * 2 ** Math.max(0, retry));
  const delay = exponential + Math.floor(random() * settings.jitterMs);
  return retryAfterMs === undefined ? delay : Math.max(delay, retryAfterMs);
}

/** Retry-After as seconds or an HTTP date; `undefined` when absent or unreadable. */
export function parseRetryAfterMs(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
