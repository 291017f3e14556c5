export interface OverloadSettings {
  /** Mean first-token latency over the passive window above this → overloaded. */
  firstTokenMs: number;
  /** Calls in flight beyond `max_concurrency` above this → overloaded. */
  queue: number;
}

export const DEFAULT_OVERLOAD_SETTINGS: OverloadSettings = { firstTokenMs: 800, queue: 8 };

/** SPEC §3.8: a local target that is slow to start answering, or has a queue, is overloaded. */
export function isOverloaded(meanFirstTokenMs: number | null, inFlight: number, maxConcurrency: number, settings: OverloadSettings): boolean {
  if (meanFirstTokenMs !== null && meanFirstTokenMs > settings.firstTokenMs) return true;
  return inFlight - maxConcurrency > settings.queue;
}
