import { FakeClock } from '../clock';
import { parseResetDuration, readUpstreamQuota, UpstreamQuota } from './upstream-quota';

describe('parseResetDuration (OpenAI x-ratelimit-reset-* values)', () => {
  it.each([
    ['1s', 1_000],
    ['6m0s', 360_000],
    ['20ms', 20],
    ['1h2m3.5s', 3_723_500],
    ['0.5s', 500],
    ['59.999s', 59_999],
    ['12', 12_000],
  ])('%s → %i ms', (text, ms) => expect(parseResetDuration(text)).toBe(ms));

  it.each(['', 'soon', '1x', '-1s', 's'])('rejects %j', (text) => expect(parseResetDuration(text)).toBeUndefined());
});

describe('readUpstreamQuota', () => {
  const headers = (values: Record<string, string>) => (name: string) => values[name] ?? null;

  it('reads requests and tokens when both halves of a pair are present', () => {
    expect(
      readUpstreamQuota(
        headers({ 'x-ratelimit-remaining-requests': '59', 'x-ratelimit-reset-requests': '1s', 'x-ratelimit-remaining-tokens': '149984', 'x-ratelimit-reset-tokens': '6m0s' }),
      ),
    ).toEqual({ requests: { remaining: 59, resetMs: 1_000 }, tokens: { remaining: 149_984, resetMs: 360_000 } });
  });

  it('ignores missing, half or malformed pairs', () => {
    expect(readUpstreamQuota(headers({}))).toBeUndefined();
    expect(readUpstreamQuota(headers({ 'x-ratelimit-remaining-requests': '5' }))).toBeUndefined();
    expect(readUpstreamQuota(headers({ 'x-ratelimit-remaining-requests': 'lots', 'x-ratelimit-reset-requests': '1s' }))).toBeUndefined();
    expect(readUpstreamQuota(headers({ 'x-ratelimit-remaining-tokens': '10', 'x-ratelimit-reset-tokens': '2s' }))).toEqual({ tokens: { remaining: 10, resetMs: 2_000 } });
  });
});

describe('UpstreamQuota (fake clock)', () => {
  it('counts what was sent since the report against it, and lets go at the reset', () => {
    const clock = new FakeClock();
    const quota = new UpstreamQuota();
    quota.apply(clock.now(), { requests: { remaining: 2, resetMs: 1_000 } });
    expect(quota.short(clock.now(), 100)).toBeNull();
    quota.sent(100);
    quota.sent(100);
    expect(quota.short(clock.now(), 100)).toBe('rpm');
    expect(quota.view(clock.now())).toEqual({ requests: 0, tokens: null, resetMs: 1_000 });
    clock.advance(1_000);
    expect(quota.short(clock.now(), 100)).toBeNull();
    expect(quota.view(clock.now())).toEqual({ requests: null, tokens: null, resetMs: null });
  });

  it('refuses a request whose estimated tokens pass the reported tokens left', () => {
    const clock = new FakeClock();
    const quota = new UpstreamQuota();
    quota.apply(clock.now(), { tokens: { remaining: 1_000, resetMs: 60_000 } });
    expect(quota.short(clock.now(), 800)).toBeNull();
    quota.sent(800);
    expect(quota.short(clock.now(), 300)).toBe('tpm');
    expect(quota.short(clock.now(), 150)).toBeNull();
    // A new report replaces the old one and what was counted since.
    quota.apply(clock.now(), { tokens: { remaining: 5_000, resetMs: 60_000 } });
    expect(quota.short(clock.now(), 300)).toBeNull();
  });
});
