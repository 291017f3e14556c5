import { createHmac } from 'node:crypto';
import { signWebhook, verifyWebhook, webhookRetryDelayMs } from './webhook';

const SECRET = 'whsec_test';
const BODY = JSON.stringify({ job_id: 'j1', status: 'succeeded' });

describe('webhook signature', () => {
  it('is t=<seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">', () => {
    const expected = createHmac('sha256', SECRET).update(`1700000000.${BODY}`).digest('hex');
    expect(signWebhook(SECRET, BODY, 1_700_000_000)).toBe(`t=1700000000,v1=${expected}`);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it('verifies within the tolerance', () => {
    const header = signWebhook(SECRET, BODY, 1_700_000_000);
    expect(verifyWebhook(SECRET, header, BODY, 1_700_000_100, 300)).toEqual({ ok: true, timestamp: 1_700_000_000 });
  });

  it('refuses a changed body, another secret, an old timestamp, and a malformed header', () => {
    const header = signWebhook(SECRET, BODY, 1_700_000_000);
    expect(verifyWebhook(SECRET, header, `${BODY} `, 1_700_000_000)).toEqual({ ok: false, reason: 'signature does not match' });
    expect(verifyWebhook('other', header, BODY, 1_700_000_000)).toEqual({ ok: false, reason: 'signature does not match' });
    expect(verifyWebhook(SECRET, header, BODY, 1_700_000_301, 300)).toEqual({ ok: false, reason: 'timestamp outside the tolerance' });
    expect(verifyWebhook(SECRET, 'v1=abc', BODY, 1_700_000_000)).toEqual({ ok: false, reason: 'no valid t= timestamp' });
    expect(verifyWebhook(SECRET, 't=1700000000', BODY, 1_700_000_000)).toEqual({ ok: false, reason: 'no v1= signature' });
  });

  it('refuses a timestamp swapped into a valid signature', () => {
    const [, v1] = signWebhook(SECRET, BODY, 1_700_000_000).split(',');
    expect(verifyWebhook(SECRET, `t=1700000100,${v1}`, BODY, 1_700_000_100).ok).toBe(false);
  });
});

describe('webhookRetryDelayMs', () => {
  it('doubles with every attempt, half fixed and half jitter', () => {
    expect(webhookRetryDelayMs(1, () => 0)).toBe(500);
    expect(webhookRetryDelayMs(1, () => 0.999_999)).toBe(1_000);
    expect(webhookRetryDelayMs(2, () => 0)).toBe(1_000);
    expect(webhookRetryDelayMs(4, () => 0.5)).toBe(6_000);
  });

  it('is capped', () => {
    expect(webhookRetryDelayMs(30, () => 0.999_999)).toBeLessThanOrEqual(3_600_000);
    expect(webhookRetryDelayMs(30, () => 0.999_999)).toBeGreaterThan(3_599_000);
    expect(webhookRetryDelayMs(1_000, () => 0)).toBe(1_800_000);
    expect(webhookRetryDelayMs(5, () => 1, { baseMs: 100, maxMs: 1_000 })).toBe(1_000);
  });
});
