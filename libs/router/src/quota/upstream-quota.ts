/**
 * What an upstream said of its own rate limits in its response headers (seed 003 §5.4), in
 * OpenAI's names: `x-ratelimit-remaining-requests` / `-tokens` and `x-ratelimit-reset-requests`
 * / `-tokens` (a duration such as `1s`, `6m0s`, `20ms`, `1h2m3.5s`). vLLM and most
 * OpenAI-compatible gateways send the same names when they limit.
 */
export interface UpstreamQuotaReport {
  requests?: { remaining: number; resetMs: number };
  tokens?: { remaining: number; resetMs: number };
}

const UNIT_MS: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };
const DURATION = /^(?:(\d+(?:\.\d+)?)(ms|h|m|s))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;

/** `6m0s` → 360000; a bare number is seconds; undefined when it is neither. */
export function parseResetDuration(value: string): number | undefined {
  const text = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.round(Number(text) * 1_000);
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART)) total += Number(amount) * UNIT_MS[unit!]!;
  return Math.round(total);
}

/** The report in a response's headers, or undefined when it carries none (the common case costs two lookups). */
export function readUpstreamQuota(header: (name: string) => string | null | undefined): UpstreamQuotaReport | undefined {
  const requests = pair(header('x-ratelimit-remaining-requests'), header('x-ratelimit-reset-requests'));
  const tokens = pair(header('x-ratelimit-remaining-tokens'), header('x-ratelimit-reset-tokens'));
  if (requests === undefined && tokens === undefined) return undefined;
  return { ...(requests === undefined ? {} : { requests }), ...(tokens === undefined ? {} : { tokens }) };
}

function pair(remaining: string | null | undefined, reset: string | null | undefined): { remaining: number; resetMs: number } | undefined {
  if (remaining === null || remaining === undefined || reset === null || reset === undefined) return undefined;
  const count = Number(remaining);
  const resetMs = parseResetDuration(reset);
  if (!Number.isFinite(count) || count < 0 || resetMs === undefined) return undefined;
  return { remaining: Math.floor(count), resetMs };
}

interface Allowance {
  remaining: number;
  resetAt: number;
  /** Sent by this process since the report (the upstream has not counted them in it). */
  usedSince: number;
}

/**
 * The headroom an upstream last reported, less what this process sent since, until the
 * reported reset. Kept per target beside the configured rpm/tpm: whichever is tighter holds.
 */
export class UpstreamQuota {
  private requests: Allowance | undefined;
  private tokens: Allowance | undefined;

  apply(now: number, report: UpstreamQuotaReport): void {
    if (report.requests) this.requests = { remaining: report.requests.remaining, resetAt: now + report.requests.resetMs, usedSince: 0 };
    if (report.tokens) this.tokens = { remaining: report.tokens.remaining, resetAt: now + report.tokens.resetMs, usedSince: 0 };
  }

  /** A request of about `tokens` tokens was sent. */
  sent(tokens: number): void {
    if (this.requests) this.requests.usedSince += 1;
    if (this.tokens) this.tokens.usedSince += tokens;
  }

  /** Which reported limit one more request of `tokens` would pass, or null. Past its reset a report no longer holds. */
  short(now: number, tokens: number): 'rpm' | 'tpm' | null {
    const requests = this.requests;
    if (requests !== undefined && now < requests.resetAt && requests.remaining - requests.usedSince < 1) return 'rpm';
    const budget = this.tokens;
    if (budget !== undefined && now < budget.resetAt && budget.remaining - budget.usedSince < Math.max(1, tokens)) return 'tpm';
    return null;
  }

  /** For the admin view: what is left of each reported limit now, null when none holds. */
  view(now: number): { requests: number | null; tokens: number | null; resetMs: number | null } {
    const live = (a: Allowance | undefined) => (a !== undefined && now < a.resetAt ? a : undefined);
    const r = live(this.requests);
    const t = live(this.tokens);
    const resets = [r?.resetAt, t?.resetAt].filter((at): at is number => at !== undefined);
    return {
      requests: r ? Math.max(0, r.remaining - r.usedSince) : null,
      tokens: t ? Math.max(0, t.remaining - t.usedSince) : null,
      resetMs: resets.length === 0 ? null : Math.max(...resets) - now,
    };
  }
}
