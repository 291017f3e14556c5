import { createHmac, timingSafeEqual } from 'node:crypto';

/** SPEC §6: `X-Switchyard-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const WEBHOOK_SIGNATURE_HEADER = 'X-Switchyard-Signature';
export const DEFAULT_WEBHOOK_TOLERANCE_S = 300;

function hmac(secret: string, body: string, unixSeconds: number): string {
  return createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
}

/** The signature header's value for a body sent at `unixSeconds`. */
export function signWebhook(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmac(secret, body, unixSeconds)}`;
}

export type WebhookVerification = { ok: true; timestamp: number } | { ok: false; reason: string };

/**
 * What a receiver does: the header must carry a `t` within `toleranceS` of `nowSeconds`
 * and a `v1` equal to the HMAC of "<t>.<body>" (compared in constant time).
 */
export function verifyWebhook(secret: string, header: string, body: string, nowSeconds: number, toleranceS = DEFAULT_WEBHOOK_TOLERANCE_S): WebhookVerification {
  const fields = header.split(',').map((part) => part.trim().split('='));
  const timestamps = fields.filter(([k]) => k === 't').map(([, v]) => v ?? '');
  const signatures = fields.filter(([k]) => k === 'v1').map(([, v]) => v ?? '');
  if (timestamps.length !== 1 || !/^\d+$/.test(timestamps[0]!)) return { ok: false, reason: 'no valid t= timestamp' };
  if (signatures.length === 0) return { ok: false, reason: 'no v1= signature' };
  const timestamp = Number(timestamps[0]);
  if (Math.abs(nowSeconds - timestamp) > toleranceS) return { ok: false, reason: 'timestamp outside the tolerance' };
  const expected = Buffer.from(hmac(secret, body, timestamp), 'hex');
  const matches = signatures.some((signature) => {
    const given = Buffer.from(signature, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? { ok: true, timestamp } : { ok: false, reason: 'signature does not match' };
}

export interface WebhookRetryPolicy {
  baseMs: number;
  maxMs: number;
}
export const DEFAULT_WEBHOOK_RETRY: WebhookRetryPolicy = { baseMs: 1_000, maxMs: 3_600_000 };

/**
 * Delay before delivery attempt `attempt + 1` after `attempt` failures (1-based): doubles
 * each time up to `maxMs`, with "equal jitter" (half fixed, half random) so receivers that
 * come back are not hit by every sender at once. `random` returns [0, 1).
 */
export function webhookRetryDelayMs(attempt: number, random: () => number, policy: WebhookRetryPolicy = DEFAULT_WEBHOOK_RETRY): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 40);
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
