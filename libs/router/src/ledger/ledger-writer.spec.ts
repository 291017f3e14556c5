import type { Logger } from '@switchyard/observability';
import type { AttemptEvent } from '../observe/call-observer';
import type { LedgerEntry } from './ledger-entry';
import { LedgerWriter, isLedgerDataError, ledgerRetryDelayMs, type LedgerWriterOptions } from './ledger-writer';

const JOB = '11111111-1111-4111-8111-111111111111';
const TASK = '22222222-2222-4222-8222-222222222222';

function attempt(n: number, overrides: Partial<AttemptEvent> = {}): AttemptEvent {
  return {
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
    target: { name: 'local_vllm_7b', type: 'local', model: 'qwen2.5-7b-instruct' },
    rule: 'fallback',
    meta: { task_type: 'extract', complexity: 'low', sensitivity: 'internal', priority: 'normal', tags: [], business_type: 'doc_review' },
    context: { tenantId: 'acme', jobId: JOB, taskId: TASK, step: 1, traceId: `trace-${n}` },
    outcome: 'ok',
    usage: { inputTokens: 100, outputTokens: 20, estimated: false },
    latencyMs: 12.5,
    costUsd: 0.0012,
    attempt: 1,
    ...overrides,
  };
}

function fakeLogger() {
  const calls: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) => calls.push({ level, obj, msg });
  const logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } as unknown as Logger;
  return { logger, calls };
}

/** What Postgres raises for a row it cannot store (SQLSTATE 22P05, untranslatable character). */
function dataError(): Error {
  return Object.assign(new Error('unsupported Unicode escape sequence'), { code: '22P05' });
}

/**
 * A sink that records batches and can be told to fail, or to hold a write open. Like
 * Postgres, it refuses a whole batch that holds a row whose business type is "poison".
 */
function fakeSink() {
  const batches: LedgerEntry[][] = [];
  let failing = false;
  let hold: Promise<void> | undefined;
  const sink = jest.fn(async (rows: readonly LedgerEntry[]) => {
    if (hold) await hold;
    if (failing) throw new Error('connection refused');
    if (rows.some((row) => row.businessType === 'poison')) throw dataError();
    batches.push([...rows]);
  });
  return {
    sink,
    batches,
    rows: () => batches.flat(),
    fail: (value: boolean) => {
      failing = value;
    },
    holdUntil: (p: Promise<void> | undefined) => {
      hold = p;
    },
  };
}

function setup(options: Partial<LedgerWriterOptions> = {}) {
  const sink = fakeSink();
  const log = fakeLogger();
  const writer = new LedgerWriter({
    source: 'worker',
    sink: sink.sink,
    logger: log.logger,
    flushIntervalMs: 1_000,
    flushRows: 5,
    maxBatchRows: 10,
    maxBufferedRows: 20,
    retryBaseMs: 1_000,
    retryMaxMs: 8_000,
    now: () => Date.now(), // jest's fake clock
    random: () => 0.5, // no jitter
    ...options,
  });
  return { writer, sink, log };
}

beforeEach(() => {
  jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
});

afterEach(() => {
  jest.useRealTimers();
});

describe('LedgerWriter', () => {
  it('maps an attempt to a ledger row', async () => {
    const { writer, sink } = setup();
    writer.onAttempt(attempt(1, { firstTokenMs: 4 }));
    await writer.flush();
    expect(sink.rows()).toEqual([
      {
        at: new Date(Date.UTC(2026, 0, 1, 0, 0, 1)),
        source: 'worker',
        tenantId: 'acme',
        jobId: JOB,
        taskId: TASK,
        step: 1,
        businessType: 'doc_review',
        target: 'local_vllm_7b',
        targetType: 'local',
        model: 'qwen2.5-7b-instruct',
        rule: 'fallback',
        outcome: 'ok',
        errorClass: null,
        httpStatus: null,
        inputTokens: 100,
        outputTokens: 20,
        usageEstimated: false,
        latencyMs: 12.5,
        firstTokenMs: 4,
        costUsd: 0.0012,
        traceId: 'trace-1',
      },
    ]);
  });

  it('books a call without context to the gateway tenant, and keeps values the table would refuse out', async () => {
    const { writer, sink } = setup({ source: 'gateway' });
    writer.onAttempt(attempt(1, { context: undefined, meta: { ...attempt(1).meta, business_type: undefined } }));
    writer.onAttempt(
      attempt(2, {
        context: { tenantId: 't', jobId: 'not-a-uuid', step: 1.6 },
        outcome: 'error',
        errorClass: 'server',
        status: 503,
        usage: undefined,
        latencyMs: Number.NaN,
        costUsd: 0,
      }),
    );
    await writer.flush();
    const [first, second] = sink.rows();
    expect(first).toMatchObject({ source: 'gateway', tenantId: 'gateway', jobId: null, taskId: null, step: null, businessType: null, traceId: null });
    expect(second).toMatchObject({ tenantId: 't', jobId: null, step: 2, outcome: 'error', errorClass: 'server', httpStatus: 503, inputTokens: 0, outputTokens: 0, latencyMs: 0 });
  });

  it('writes nothing on the hot path: rows wait for the interval', async () => {
    const { writer, sink } = setup();
    writer.onAttempt(attempt(1));
    writer.onAttempt(attempt(2));
    expect(sink.sink).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(999);
    expect(sink.sink).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(sink.batches.map((b) => b.length)).toEqual([2]);
    expect(writer.stats()).toEqual({ buffered: 0, written: 2, dropped: 0, quarantined: 0, failedWrites: 0 });
  });

  it('writes at once, in one batch, when flushRows are waiting', async () => {
    const { writer, sink } = setup();
    for (let i = 0; i < 5; i += 1) writer.onAttempt(attempt(i));
    await jest.advanceTimersByTimeAsync(0);
    expect(sink.batches.map((b) => b.length)).toEqual([5]);
  });

  it('splits a large buffer into batches of maxBatchRows', async () => {
    const { writer, sink } = setup({ flushRows: 100, maxBufferedRows: 100 });
    for (let i = 0; i < 25; i += 1) writer.onAttempt(attempt(i));
    await writer.flush();
    expect(sink.batches.map((b) => b.length)).toEqual([10, 10, 5]);
    expect(sink.rows().map((r) => r.traceId)).toEqual(Array.from({ length: 25 }, (_, i) => `trace-${i}`));
  });

  it('keeps the rows of a failed write and retries them with growing backoff, in order', async () => {
    const { writer, sink, log } = setup();
    sink.fail(true);
    writer.onAttempt(attempt(1));
    await jest.advanceTimersByTimeAsync(1_000); // first write fails
    expect(sink.sink).toHaveBeenCalledTimes(1);
    writer.onAttempt(attempt(2));

    await jest.advanceTimersByTimeAsync(999); // backoff 1 s
    expect(sink.sink).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1); // second write fails
    expect(sink.sink).toHaveBeenCalledTimes(2);

    await jest.advanceTimersByTimeAsync(1_999); // backoff 2 s
    expect(sink.sink).toHaveBeenCalledTimes(2);
    sink.fail(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(sink.sink).toHaveBeenCalledTimes(3);
    expect(sink.rows().map((r) => r.traceId)).toEqual(['trace-1', 'trace-2']);
    expect(writer.stats()).toEqual({ buffered: 0, written: 2, dropped: 0, quarantined: 0, failedWrites: 2 });
    expect(log.calls.filter((c) => c.msg === 'ledger: write failed; will retry')).toHaveLength(2);
    expect(log.calls.some((c) => c.msg === 'ledger: writes resumed')).toBe(true);
  });

  it('does not hammer a failing database when rows keep arriving during the backoff', async () => {
    const { writer, sink } = setup();
    sink.fail(true);
    for (let i = 0; i < 5; i += 1) writer.onAttempt(attempt(i));
    await jest.advanceTimersByTimeAsync(0);
    expect(sink.sink).toHaveBeenCalledTimes(1);
    for (let i = 5; i < 15; i += 1) writer.onAttempt(attempt(i));
    await jest.advanceTimersByTimeAsync(500);
    expect(sink.sink).toHaveBeenCalledTimes(1);
  });

  it('writes every good row of a batch the database refuses for one poison row, and quarantines that row', async () => {
    const { writer, sink, log } = setup({ flushRows: 1_000, maxBatchRows: 10 });
    const poison = { ...attempt(4).meta, business_type: 'poison' };
    for (let i = 0; i < 10; i += 1) writer.onAttempt(attempt(i, i === 4 || i === 7 ? { meta: poison } : {}));
    await writer.flush();
    expect(sink.rows().map((r) => r.traceId)).toEqual([0, 1, 2, 3, 5, 6, 8, 9].map((i) => `trace-${i}`));
    expect(writer.stats()).toEqual({ buffered: 0, written: 8, dropped: 0, quarantined: 2, failedWrites: 0 });
    const quarantined = log.calls.filter((c) => c.msg === 'ledger: the database refused a row for its data; left out of the ledger');
    expect(quarantined.map((c) => c.obj.trace_id)).toEqual(['trace-4', 'trace-7']);
    expect(JSON.stringify(quarantined)).not.toContain('poison');
  });

  it('keeps writing later rows after a poison row: it is never retried', async () => {
    const { writer, sink } = setup({ flushRows: 1 });
    writer.onAttempt(attempt(1, { meta: { ...attempt(1).meta, business_type: 'poison' } }));
    await jest.advanceTimersByTimeAsync(0);
    writer.onAttempt(attempt(2));
    await jest.advanceTimersByTimeAsync(0);
    expect(sink.rows().map((r) => r.traceId)).toEqual(['trace-2']);
    expect(writer.stats()).toMatchObject({ buffered: 0, written: 1, quarantined: 1, failedWrites: 0 });
  });

  it('stops splitting when the database goes away meanwhile, and keeps the unwritten rows in order for the retry', async () => {
    const { writer, sink } = setup({ flushRows: 1_000, maxBatchRows: 10 });
    for (let i = 0; i < 8; i += 1) writer.onAttempt(attempt(i, i === 6 ? { meta: { ...attempt(i).meta, business_type: 'poison' } } : {}));
    sink.sink.mockImplementationOnce(async () => {
      throw dataError();
    });
    sink.sink.mockImplementationOnce(async () => {
      throw new Error('connection refused');
    });
    await writer.flush();
    expect(writer.stats()).toMatchObject({ buffered: 8, written: 0, quarantined: 0, failedWrites: 1 });
    await writer.flush();
    expect(sink.rows().map((r) => r.traceId)).toEqual([0, 1, 2, 3, 4, 5, 7].map((i) => `trace-${i}`));
    expect(writer.stats()).toMatchObject({ buffered: 0, written: 7, quarantined: 1 });
  });

  it('tells data errors (SQLSTATE classes 22 and 23) from outages', () => {
    expect(isLedgerDataError(dataError())).toBe(true);
    expect(isLedgerDataError(Object.assign(new Error('null value'), { code: '23502' }))).toBe(true);
    expect(isLedgerDataError(Object.assign(new Error('too many connections'), { code: '53300' }))).toBe(false);
    expect(isLedgerDataError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(false);
    expect(isLedgerDataError(new Error('connection terminated'))).toBe(false);
  });

  it('caps the backoff', () => {
    expect([1, 2, 3, 4, 5, 10].map((n) => ledgerRetryDelayMs(n, 1_000, 8_000, 0.5))).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
    expect(ledgerRetryDelayMs(1, 1_000, 8_000, 0)).toBe(800);
    expect(ledgerRetryDelayMs(1, 1_000, 8_000, 1)).toBe(1_200);
  });

  it('drops the oldest rows when the buffer is full, and warns with the count (not once per row)', async () => {
    const { writer, sink, log } = setup({ flushRows: 1_000, maxBufferedRows: 20 });
    sink.fail(true);
    for (let i = 0; i < 25; i += 1) writer.onAttempt(attempt(i));
    expect(writer.stats()).toMatchObject({ buffered: 20, dropped: 5 });
    expect(log.calls.filter((c) => c.msg === 'ledger: rows dropped')).toHaveLength(1);

    sink.fail(false);
    await writer.flush();
    expect(sink.rows().map((r) => r.traceId)).toEqual(Array.from({ length: 20 }, (_, i) => `trace-${i + 5}`));
  });

  it('bounds the buffer when a failed batch comes back', async () => {
    const { writer, sink } = setup({ flushRows: 1_000, maxBatchRows: 10, maxBufferedRows: 12 });
    for (let i = 0; i < 10; i += 1) writer.onAttempt(attempt(i));
    sink.fail(true);
    let release!: () => void;
    sink.holdUntil(new Promise<void>((resolve) => (release = resolve)));
    const flushing = writer.flush(); // takes all 10 into a write that will fail
    for (let i = 10; i < 15; i += 1) writer.onAttempt(attempt(i));
    sink.holdUntil(undefined);
    release();
    await flushing;
    expect(writer.stats()).toMatchObject({ buffered: 12, dropped: 3 });
    sink.fail(false);
    await writer.flush();
    expect(sink.rows().map((r) => r.traceId)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14].map((i) => `trace-${i}`));
  });

  it('never throws into the caller, even when the sink throws synchronously', async () => {
    const log = fakeLogger();
    const writer = new LedgerWriter({
      source: 'worker',
      logger: log.logger,
      flushRows: 1,
      sink: () => {
        throw new Error('sync boom');
      },
    });
    expect(() => writer.onAttempt(attempt(1))).not.toThrow();
    expect(() => writer.onAttempt({ ...attempt(2), target: undefined } as unknown as AttemptEvent)).not.toThrow();
    await expect(writer.flush()).resolves.toBeUndefined();
    expect(log.calls.some((c) => c.level === 'error' && c.msg === 'ledger: could not record an upstream attempt')).toBe(true);
    await writer.close();
  });

  it('close() writes what is left at once, then drops later rows (counted)', async () => {
    const { writer, sink } = setup({ flushRows: 1_000 });
    writer.onAttempt(attempt(1));
    writer.onAttempt(attempt(2));
    await writer.close();
    expect(sink.rows()).toHaveLength(2);
    writer.onAttempt(attempt(3));
    expect(writer.stats()).toMatchObject({ written: 2, dropped: 1, buffered: 0 });
    await jest.advanceTimersByTimeAsync(10_000);
    expect(sink.sink).toHaveBeenCalledTimes(1);
  });

  it('close() waits for a write in progress and then writes the rest', async () => {
    const { writer, sink } = setup({ flushRows: 2 });
    let release!: () => void;
    sink.holdUntil(new Promise<void>((resolve) => (release = resolve)));
    writer.onAttempt(attempt(1));
    writer.onAttempt(attempt(2)); // starts a write, held open
    writer.onAttempt(attempt(3));
    const closing = writer.close();
    sink.holdUntil(undefined);
    release();
    await closing;
    expect(sink.rows().map((r) => r.traceId)).toEqual(['trace-1', 'trace-2', 'trace-3']);
  });

  it('close() reports rows it could not write', async () => {
    const { writer, sink, log } = setup();
    sink.fail(true);
    writer.onAttempt(attempt(1));
    await writer.close();
    expect(writer.stats()).toMatchObject({ buffered: 0, dropped: 1, failedWrites: 1 });
    expect(log.calls.find((c) => c.msg === 'ledger: rows dropped')?.obj).toMatchObject({ dropped: 1, reason: 'the ledger could not be written before shutdown' });
  });
});
