import { CallLog, type NewCall } from './call-log';

const call = (target: string, outcome: NewCall['outcome'] = 'ok'): NewCall => ({
  target,
  model: 'm',
  at: '2025-01-01T00:00:00.000Z',
  stream: false,
  status: 200,
  outcome,
  headers: {},
  message_chars: 1,
  last_user_message_preview: 'x',
});

describe('CallLog', () => {
  it('drops the oldest entries beyond capacity, keeping order', () => {
    const log = new CallLog(3);
    for (let i = 0; i < 5; i += 1) log.append(call('a'));
    expect(log.size).toBe(3);
    expect(log.query().map((c) => c.seq)).toEqual([3, 4, 5]);
  });

  it('filters by target and since_seq', () => {
    const log = new CallLog(10);
    log.append(call('a'));
    log.append(call('b'));
    log.append(call('a'));
    expect(log.query({ target: 'a' }).map((c) => c.seq)).toEqual([1, 3]);
    expect(log.query({ sinceSeq: 1 }).map((c) => c.seq)).toEqual([2, 3]);
    expect(log.query({ target: 'b', sinceSeq: 2 })).toEqual([]);
  });

  it('counts outcomes per target since the last clear; seq survives clears', () => {
    const log = new CallLog(2);
    log.append(call('a', 'error'));
    log.append(call('a', 'hang'));
    log.append(call('a'));
    expect(log.countsFor('a')).toEqual({ ok: 1, error: 1, ratelimit: 0, hang: 1, garbage: 0, wrong: 0, total: 3 });
    expect(log.countsFor('nobody').total).toBe(0);
    expect(log.clear()).toBe(2);
    expect(log.countsFor('a').total).toBe(0);
    expect(log.append(call('a')).seq).toBe(4);
  });

  it('holds 50,000 entries by default', () => {
    const log = new CallLog();
    for (let i = 0; i < 50_001; i += 1) log.append(call('a'));
    expect(log.size).toBe(50_000);
    expect(log.query()[0]?.seq).toBe(2);
  });

  it('rejects a nonsensical capacity', () => {
    expect(() => new CallLog(0)).toThrow(RangeError);
  });
});
