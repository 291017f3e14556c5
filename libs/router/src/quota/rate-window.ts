const SECONDS = 60;

/**
 * Requests and tokens sent to one target over the last minute, in one-second buckets:
 * O(1) to add, O(60) to read, no allocation on either.
 */
export class RateWindow {
  private readonly second = new Array<number>(SECONDS).fill(-1);
  private readonly requests = new Array<number>(SECONDS).fill(0);
  private readonly tokens = new Array<number>(SECONDS).fill(0);

  add(now: number, tokens: number): void {
    const second = Math.floor(now / 1000);
    const index = second % SECONDS;
    if (this.second[index] !== second) {
      this.second[index] = second;
      this.requests[index] = 0;
      this.tokens[index] = 0;
    }
    this.requests[index]! += 1;
    this.tokens[index]! += tokens;
  }

  totals(now: number): { requests: number; tokens: number } {
    const current = Math.floor(now / 1000);
    let requests = 0;
    let tokens = 0;
    for (let i = 0; i < SECONDS; i++) {
      if (current - this.second[i]! >= SECONDS || this.second[i]! < 0) continue;
      requests += this.requests[i]!;
      tokens += this.tokens[i]!;
    }
    return { requests, tokens };
  }
}

export interface QuotaLimits {
  rpm?: number;
  tpm?: number;
}

/** Whether one more request of `estimatedTokens` fits under the target's RPM and TPM. */
export function quotaHeadroom(window: RateWindow, limits: QuotaLimits, now: number, estimatedTokens: number): 'rpm' | 'tpm' | null {
  if (limits.rpm === undefined && limits.tpm === undefined) return null;
  const used = window.totals(now);
  if (limits.rpm !== undefined && used.requests + 1 > limits.rpm) return 'rpm';
  if (limits.tpm !== undefined && used.tokens + estimatedTokens > limits.tpm) return 'tpm';
  return null;
}
