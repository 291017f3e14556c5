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
 * `windowMs`. The hot path (every routing decision) asks only for the mean first-token time,
 * kept as a running sum over the samples still in the window: O(1) per write and per read
 * (samples arrive in time order, so the expired ones are always the oldest). Percentiles are
 * computed on demand (admin).
 */
export class SlidingWindow {
  private readonly samples: (WindowSample | undefined)[];
  private next = 0;
  /** The samples in the running sum: `counted` of them, oldest at `oldest`. */
  private oldest = 0;
  private counted = 0;
  private firstTokenSum = 0;
  private firstTokenCount = 0;

  constructor(
    private readonly size: number,
    private windowMs: number,
  ) {
    this.samples = new Array<WindowSample | undefined>(size);
  }

  /** A new time span (config reload); the samples carry over. */
  setWindowMs(windowMs: number): void {
    this.windowMs = windowMs;
    this.recount();
  }

  add(sample: WindowSample): void {
    if (this.counted === this.size) this.uncountOldest();
    this.samples[this.next] = sample;
    this.next = (this.next + 1) % this.size;
    this.counted += 1;
    if (sample.firstTokenMs !== undefined) {
      this.firstTokenSum += sample.firstTokenMs;
      this.firstTokenCount += 1;
    }
  }

  /** Mean first-token latency of the samples within the window, or null without any. */
  meanFirstTokenMs(now: number): number | null {
    while (this.counted > 0 && now - this.samples[this.oldest]!.at > this.windowMs) this.uncountOldest();
    return this.firstTokenCount === 0 ? null : this.firstTokenSum / this.firstTokenCount;
  }

  /** How many samples the first-token mean averages (after `meanFirstTokenMs(now)` dropped the expired ones). */
  get firstTokenSamples(): number {
    return this.firstTokenCount;
  }

  private uncountOldest(): void {
    const sample = this.samples[this.oldest]!;
    if (sample.firstTokenMs !== undefined) {
      this.firstTokenSum -= sample.firstTokenMs;
      this.firstTokenCount -= 1;
    }
    this.oldest = (this.oldest + 1) % this.size;
    this.counted -= 1;
  }

  /** Rebuilds the running sum from the ring (the window changed, so evicted samples may count again). */
  private recount(): void {
    const stored = this.samples.filter((s): s is WindowSample => s !== undefined).length;
    this.oldest = (this.next - stored + this.size) % this.size;
    this.counted = stored;
    this.firstTokenSum = 0;
    this.firstTokenCount = 0;
    for (let i = 0; i < stored; i++) {
      const sample = this.samples[(this.oldest + i) % this.size]!;
      if (sample.firstTokenMs === undefined) continue;
      this.firstTokenSum += sample.firstTokenMs;
      this.firstTokenCount += 1;
    }
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
