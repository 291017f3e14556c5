import { RequestMetaSchema } from '@switchyard/contracts';
import type { AttemptEvent, AttemptStart } from '@switchyard/router';
import type { AttemptLedgerRow, ModelCallResultRow } from '@switchyard/state';
import { IdempotentModelRouter, type AttemptLedgerStore, type ModelCallResultStore } from './idempotent-model-router';
import type { ModelChatRequest, ModelChatResult, ModelRouter } from './model-router.port';

class MemoryStore implements ModelCallResultStore {
  readonly rows = new Map<string, ModelCallResultRow>();
  /** The attempt rows each store() wrote with its answer. */
  readonly attemptsStored: AttemptLedgerRow[][] = [];
  async find(key: string) {
    return this.rows.get(key);
  }
  async store(row: Omit<ModelCallResultRow, 'createdAt'>, attempts: readonly AttemptLedgerRow[] = []) {
    this.attemptsStored.push([...attempts]);
    const kept = this.rows.get(row.idempotencyKey) ?? { ...row, createdAt: new Date() };
    this.rows.set(row.idempotencyKey, kept);
    return kept;
  }
}

class CountingRouter implements ModelRouter {
  calls = 0;
  constructor(private readonly answer: (n: number) => string = (n) => `answer ${n}`) {}
  async chat(): Promise<ModelChatResult> {
    this.calls += 1;
    return {
      content: this.answer(this.calls),
      target: 'local_7b',
      model: 'qwen-7b',
      rule: 'fallback',
      usage: { inputTokens: 10, outputTokens: 5 },
      latencyMs: 40,
      costUsd: 0.002,
      attempts: [{ target: 'local_7b', model: 'qwen-7b', rule: 'fallback', outcome: 'ok', latencyMs: 40 }],
    };
  }
}

const request = (key?: string): ModelChatRequest => ({
  meta: RequestMetaSchema.parse({ task_type: 'extract', complexity: 'low' }),
  messages: [{ role: 'user', content: 'x' }],
  context: { tenantId: 'acme', jobId: 'job-1', taskId: 'task-1', step: 1 },
  ...(key ? { idempotencyKey: key } : {}),
});

describe('IdempotentModelRouter', () => {
  it("skips the lookup under a task's first lease, still stores the answer, and a later lease finds it", async () => {
    const inner = new CountingRouter();
    const store = new MemoryStore();
    const lookups: string[] = [];
    const find = store.find.bind(store);
    store.find = async (key: string) => {
      lookups.push(key);
      return find(key);
    };
    const router = new IdempotentModelRouter(inner, store);
    const first = request('task-1:1:1');
    const firstRun = await router.chat({ ...first, context: { ...first.context!, firstLease: true } });
    expect(lookups).toEqual([]);
    expect(store.rows.get('task-1:1:1')).toMatchObject({ content: 'answer 1' });
    // The task's next run (a resumption after a crash between the answer and the checkpoint) holds a later lease: it looks, and pays nothing.
    const replay = await router.chat(request('task-1:1:1'));
    expect(lookups).toEqual(['task-1:1:1']);
    expect(inner.calls).toBe(1);
    expect(replay).toMatchObject({ content: firstRun.content, reused: true });
  });

  it('a run under the first lease that races a successor keeps the answer stored first', async () => {
    const store = new MemoryStore();
    // The successor (a later lease) stored its answer while the presumed-dead first run was still calling.
    await new IdempotentModelRouter(new CountingRouter(() => 'successor'), store).chat(request('task-1:1:1'));
    const late = request('task-1:1:1');
    const result = await new IdempotentModelRouter(new CountingRouter(() => 'late first run'), store).chat({ ...late, context: { ...late.context!, firstLease: true } });
    expect(result).toMatchObject({ content: 'successor', reused: true });
  });

  it('calls upstream once per key and reuses the stored answer on a replay', async () => {
    const inner = new CountingRouter();
    const store = new MemoryStore();
    const router = new IdempotentModelRouter(inner, store);
    const first = await router.chat(request('task-1:1:1'));
    const replay = await router.chat(request('task-1:1:1'));
    expect(inner.calls).toBe(1);
    expect(first.reused).toBeUndefined();
    expect(replay).toMatchObject({ content: 'answer 1', target: 'local_7b', reused: true, costUsd: 0.002 });
    expect(replay.attempts).toEqual([expect.objectContaining({ target: 'local_7b', outcome: 'ok' })]);
    expect(store.rows.get('task-1:1:1')).toMatchObject({ tenantId: 'acme', taskId: 'task-1', content: 'answer 1' });
  });

  it('keys each call of a step apart (the bad-output retry is call 2)', async () => {
    const inner = new CountingRouter();
    const router = new IdempotentModelRouter(inner, new MemoryStore());
    await router.chat(request('task-1:1:1'));
    const second = await router.chat(request('task-1:1:2'));
    expect(inner.calls).toBe(2);
    expect(second.content).toBe('answer 2');
  });

  it('goes on with the answer stored first when another run of the step stored one meanwhile', async () => {
    const store = new MemoryStore();
    await store.store({ idempotencyKey: 'task-1:1:1', tenantId: 'acme', taskId: 'task-1', content: 'earlier', target: 'cloud', model: 'm', rule: 'r', usage: { inputTokens: 1, outputTokens: 1 }, costUsd: 0.01 });
    const racing: ModelCallResultStore = { find: async () => undefined, store: (row) => store.store(row) };
    const result = await new IdempotentModelRouter(new CountingRouter(), racing).chat(request('task-1:1:1'));
    expect(result).toMatchObject({ content: 'earlier', reused: true });
  });

  it('passes calls without a key straight through', async () => {
    const inner = new CountingRouter();
    const store = new MemoryStore();
    const router = new IdempotentModelRouter(inner, store);
    await router.chat(request());
    await router.chat(request());
    expect(inner.calls).toBe(2);
    expect(store.rows.size).toBe(0);
  });
});

/** The attempt ledger, in memory: what was written, in order. */
class MemoryAttemptLedger implements AttemptLedgerStore {
  readonly writes: { kind: 'started' | 'finished'; rows: AttemptLedgerRow[]; abandonEarlier?: boolean }[] = [];
  failFinished: Error | undefined;
  async recordStarted(row: AttemptLedgerRow, options: { abandonEarlier: boolean }) {
    this.writes.push({ kind: 'started', rows: [row], abandonEarlier: options.abandonEarlier });
  }
  async recordFinished(rows: readonly AttemptLedgerRow[]) {
    if (this.failFinished) throw this.failFinished;
    this.writes.push({ kind: 'finished', rows: [...rows] });
  }
}

const TARGET = { name: 'cloud_main', type: 'cloud' as const, model: 'gpt' };

/** An inner router that makes its attempts through the request's recorder: each fails but the last, unless `fail`. */
class RecordingRouter implements ModelRouter {
  readonly sentAfter: number[] = [];
  constructor(
    private readonly ledger: MemoryAttemptLedger,
    private readonly attempts: number,
    private readonly fail?: Error,
  ) {}
  async chat(request: ModelChatRequest): Promise<ModelChatResult> {
    const recorder = request.attemptRecorder!;
    for (let attempt = 1; attempt <= this.attempts; attempt += 1) {
      const start: AttemptStart = { at: new Date(), attempt, target: TARGET, rule: 'r', meta: request.meta, context: request.context, estimatedInputTokens: 100, estimatedInputCostUsd: 0.2 };
      await recorder.started(start);
      this.sentAfter.push(this.ledger.writes.length);
      const last = attempt === this.attempts && !this.fail;
      const event: AttemptEvent = {
        at: new Date(),
        target: TARGET,
        rule: 'r',
        meta: request.meta,
        context: request.context,
        outcome: last ? 'ok' : 'error',
        ...(last ? { usage: { inputTokens: 100, outputTokens: 50, estimated: false } } : { errorClass: 'server' as const, status: 500 }),
        latencyMs: 10,
        costUsd: last ? 0.7 : 0,
        attempt,
        recordedByCaller: true,
      };
      recorder.finished(event);
    }
    if (this.fail) throw this.fail;
    return { content: 'paid answer', target: TARGET.name, model: 'gpt', rule: 'r', usage: { inputTokens: 100, outputTokens: 50 }, latencyMs: 20, costUsd: 0.7, attempts: [] };
  }
}

const jobRequest = (key: string): ModelChatRequest => ({
  ...request(key),
  context: { tenantId: 'acme', jobId: '11111111-1111-4111-8111-111111111111', taskId: '22222222-2222-4222-8222-222222222222', step: 1 },
});

describe('IdempotentModelRouter with an attempt ledger', () => {
  it('writes each attempt in flight before it is sent, and completes them with the answer in one store', async () => {
    const ledger = new MemoryAttemptLedger();
    const store = new MemoryStore();
    const inner = new RecordingRouter(ledger, 2);
    let written = 0;
    const result = await new IdempotentModelRouter(inner, store, { ledger, newRunId: () => 'run-1', onRowsWritten: (n) => (written += n) }).chat(jobRequest('task-1:1:1'));

    expect(result.content).toBe('paid answer');
    // Each attempt's row was written before the attempt went on (1 write before the first, 2 before the second).
    expect(inner.sentAfter).toEqual([1, 2]);
    expect(ledger.writes.map((w) => [w.kind, w.rows[0]!.attemptId, w.rows[0]!.outcome, w.abandonEarlier])).toEqual([
      ['started', 'run-1:1', 'in_flight', true],
      ['started', 'run-1:2', 'in_flight', false],
    ]);
    expect(ledger.writes[0]!.rows[0]).toMatchObject({
      source: 'worker',
      tenantId: 'acme',
      jobId: '11111111-1111-4111-8111-111111111111',
      taskId: '22222222-2222-4222-8222-222222222222',
      step: 1,
      target: 'cloud_main',
      inputTokens: 100,
      usageEstimated: true,
      costUsd: 0.2,
    });
    // The finished attempts went with the answer, under the ids they were started with.
    expect(store.attemptsStored).toEqual([
      [
        expect.objectContaining({ attemptId: 'run-1:1', outcome: 'error', errorClass: 'server', httpStatus: 500, costUsd: 0 }),
        expect.objectContaining({ attemptId: 'run-1:2', outcome: 'ok', inputTokens: 100, outputTokens: 50, costUsd: 0.7 }),
      ],
    ]);
    expect(written).toBe(2);
  });

  it('completes the attempts of a failed call before its failure is thrown', async () => {
    const ledger = new MemoryAttemptLedger();
    const store = new MemoryStore();
    const failure = new Error('every attempt failed');
    const router = new IdempotentModelRouter(new RecordingRouter(ledger, 2, failure), store, { ledger, newRunId: () => 'run-2' });

    await expect(router.chat(jobRequest('task-1:1:1'))).rejects.toBe(failure);
    expect(ledger.writes.map((w) => [w.kind, w.rows.map((r) => `${r.attemptId} ${r.outcome}`)])).toEqual([
      ['started', ['run-2:1 in_flight']],
      ['started', ['run-2:2 in_flight']],
      ['finished', ['run-2:1 error', 'run-2:2 error']],
    ]);
    expect(store.rows.size).toBe(0);
  });

  it("still throws the call's own failure when its attempts cannot be completed", async () => {
    const ledger = new MemoryAttemptLedger();
    ledger.failFinished = new Error('database down');
    const failure = new Error('every attempt failed');
    const router = new IdempotentModelRouter(new RecordingRouter(ledger, 1, failure), new MemoryStore(), { ledger, newRunId: () => 'run-3' });
    await expect(router.chat(jobRequest('task-1:1:1'))).rejects.toBe(failure);
  });

  it('writes nothing for an answer it reuses, and leaves calls without a key to the buffered ledger', async () => {
    const ledger = new MemoryAttemptLedger();
    const store = new MemoryStore();
    const router = new IdempotentModelRouter(new RecordingRouter(ledger, 1), store, { ledger });
    await router.chat(jobRequest('task-1:1:1'));
    const writes = ledger.writes.length;
    await router.chat(jobRequest('task-1:1:1'));
    expect(ledger.writes.length).toBe(writes);

    const plain = new CountingRouter();
    let recorderSeen = false;
    const spy: ModelRouter = { chat: (r) => ((recorderSeen = r.attemptRecorder !== undefined), plain.chat()) };
    await new IdempotentModelRouter(spy, store, { ledger }).chat(request());
    expect(recorderSeen).toBe(false);
  });
});
