/** One finished attempt as the passive window keeps it. */
export interface WindowSample {
  at: number;
  ok: boolean;
  latencyMs: number;
  firstTokenMs?: number;
  outputTokens?: number;
}

export interface WindowStats {
  requests: number;
  successRate: number | null;
  latencyMs: { p50: number | null; p95: number | null };
  firstTokenMs: { p50: number | null; p95: number | null; mean: number | null };
  tokensPerSecond: number | null;
}

/**
 * The last `size` attempts of one target, in a ring. Reads ignore samples older than
 * `windowMs`. The hot path only asks for the mean first-token time, which is cached per
 * write; percentiles are computed on demand (admin, scoring refresh).
 */
export class SlidingWindow {
  private readonly samples: (WindowSample | undefined)[];
  private next = 0;
  private meanCache: { at: number; value: number | null } | undefined;

  constructor(
    private readonly size: number,
    private windowMs: number,
  ) {
    this.samples = new Array<WindowSample | undefined>(size);
  }

  /** A new time span (config reload); the samples carry over. */
  setWindowMs(windowMs: number): void {
    this.windowMs = windowMs;
    this.meanCache = undefined;
  }

  add(sample: WindowSample): void {
    this.samples[this.next] = sample;
    this.next = (this.next + 1) % this.size;
    this.meanCache = undefined;
  }

  /** Mean first-token latency over the window; cached for a second so the decision path stays cheap. */
  meanFirstTokenMs(now: number): number | null {
    if (this.meanCache !== undefined && now - this.meanCache.at < 1_000) return this.meanCache.value;
    let sum = 0;
    let count = 0;
    for (const sample of this.samples) {
      if (sample === undefined || sample.firstTokenMs === undefined || now - sample.at > this.windowMs) continue;
      sum += sample.firstTokenMs;
      count += 1;
    }
    const value = count === 0 ? null : sum / count;
    this.meanCache = { at: now, value };
    return value;
  }

  stats(now: number): WindowStats {
    const recent = this.samples.filter((s): s is WindowSample => s !== undefined && now - s.at <= this.windowMs);
    const ok = recent.filter((s) => s.ok);
    const latencies = ok.map((s) => s.latencyMs).sort((a, b) => a - b);
    const firstTokens = ok.flatMap((s) => (s.firstTokenMs === undefined ? [] : [s.firstTokenMs])).sort((a, b) => a - b);
    let tokens = 0;
    let streamMs = 0;
    for (const s of ok) {
      if (s.outputTokens === undefined) continue;
      tokens += s.outputTokens;
      streamMs += Math.max(1, s.latencyMs - (s.firstTokenMs ?? 0));
    }
    return {
      requests: recent.length,
      successRate: recent.length === 0 ? null : ok.length / recent.length,
      latencyMs: { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95) },
      firstTokenMs: {
        p50: percentile(firstTokens, 0.5),
        p95: percentile(firstTokens, 0.95),
        mean: firstTokens.length === 0 ? null : firstTokens.reduce((a, b) => a + b, 0) / firstTokens.length,
      },
      tokensPerSecond: streamMs === 0 ? null : (tokens * 1000) / streamMs,
    };
  }
}

/** Nearest-rank percentile of an ascending list. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[rank]!;
}
