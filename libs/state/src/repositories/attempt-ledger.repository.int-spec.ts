import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../testing/test-database';
import { AttemptLedgerRepository, type AttemptLedgerRow } from './attempt-ledger.repository';
import { ModelCallResultRepository, type NewModelCallResult } from './model-call-result.repository';

// Real Postgres with the real migrations; nothing mocked.
let database: TestDatabase;
let attempts: AttemptLedgerRepository;
let results: ModelCallResultRepository;

beforeAll(async () => {
  database = await createTestDatabase();
  attempts = new AttemptLedgerRepository(database.db, database.pool);
  results = new ModelCallResultRepository(database.db, database.pool);
});

afterAll(async () => {
  await database?.destroy();
});

function attempt(taskId: string, attemptId: string, overrides: Partial<AttemptLedgerRow> = {}): AttemptLedgerRow {
  return {
    at: new Date(),
    source: 'worker',
    tenantId: 'acme',
    jobId: randomUUID(),
    taskId,
    step: 1,
    target: 'cloud_main',
    targetType: 'cloud',
    model: 'gpt',
    rule: 'complex_reasoning',
    outcome: 'in_flight',
    inputTokens: 120,
    usageEstimated: true,
    latencyMs: 0,
    costUsd: 0.00024,
    attemptId,
    ...overrides,
  };
}

function answer(key: string, taskId: string, content: string): NewModelCallResult {
  return { idempotencyKey: key, tenantId: 'acme', taskId, content, target: 'cloud_main', model: 'gpt', rule: 'complex_reasoning', usage: { inputTokens: 120, outputTokens: 40 }, costUsd: 0.0006 };
}

async function rowsOf(taskId: string) {
  const { rows } = await database.pool.query<{ attempt_id: string; outcome: string; error_class: string | null; input_tokens: number; output_tokens: number; usage_estimated: boolean; cost_usd: number }>(
    'select attempt_id, outcome, error_class, input_tokens, output_tokens, usage_estimated, cost_usd from model_call_ledger where task_id = $1 order by attempt_id',
    [taskId],
  );
  return rows;
}

describe('AttemptLedgerRepository and the paid-once store', () => {
  it('keeps an attempt in flight until it finishes; the answer and its attempts are stored in one statement', async () => {
    const task = randomUUID();
    await attempts.recordStarted(attempt(task, 'run-a:1'), { abandonEarlier: true });
    await attempts.recordStarted(attempt(task, 'run-a:2'), { abandonEarlier: false });
    expect((await rowsOf(task)).map((r) => [r.attempt_id, r.outcome])).toEqual([
      ['run-a:1', 'in_flight'],
      ['run-a:2', 'in_flight'],
    ]);

    const kept = await results.store(answer(`${task}:1:1`, task, 'the answer'), [
      attempt(task, 'run-a:1', { outcome: 'error', errorClass: 'server', httpStatus: 500, inputTokens: 0, usageEstimated: false, costUsd: 0, latencyMs: 12 }),
      attempt(task, 'run-a:2', { outcome: 'ok', inputTokens: 120, outputTokens: 40, usageEstimated: false, costUsd: 0.0006, latencyMs: 800 }),
    ]);

    expect(kept).toMatchObject({ idempotencyKey: `${task}:1:1`, content: 'the answer', costUsd: 0.0006, createdAt: expect.any(Date) });
    expect(await results.find(`${task}:1:1`)).toMatchObject({ content: 'the answer', usage: { inputTokens: 120, outputTokens: 40 } });
    expect(await rowsOf(task)).toEqual([
      { attempt_id: 'run-a:1', outcome: 'error', error_class: 'server', input_tokens: 0, output_tokens: 0, usage_estimated: false, cost_usd: 0 },
      { attempt_id: 'run-a:2', outcome: 'ok', error_class: null, input_tokens: 120, output_tokens: 40, usage_estimated: false, cost_usd: 0.0006 },
    ]);
  });

  it("marks a dead run's attempts abandoned when the task's next run starts its call; other tasks' stay in flight", async () => {
    const task = randomUUID();
    const other = randomUUID();
    await attempts.recordStarted(attempt(task, 'dead:1'), { abandonEarlier: true });
    await attempts.recordStarted(attempt(other, 'busy:1'), { abandonEarlier: true });

    await attempts.recordStarted(attempt(task, 'next:1'), { abandonEarlier: true });

    expect(await rowsOf(task)).toEqual([
      // What it was: sent, never answered; its estimated input and that input's price kept.
      { attempt_id: 'dead:1', outcome: 'abandoned', error_class: null, input_tokens: 120, output_tokens: 0, usage_estimated: true, cost_usd: 0.00024 },
      expect.objectContaining({ attempt_id: 'next:1', outcome: 'in_flight' }),
    ]);
    expect((await rowsOf(other)).map((r) => r.outcome)).toEqual(['in_flight']);
  });

  it('gives an attempt marked abandoned its real outcome when its run was only presumed dead and finishes', async () => {
    const task = randomUUID();
    await attempts.recordStarted(attempt(task, 'slow:1'), { abandonEarlier: true });
    await attempts.recordStarted(attempt(task, 'successor:1'), { abandonEarlier: true });

    await attempts.recordFinished([attempt(task, 'slow:1', { outcome: 'error', errorClass: 'timeout', inputTokens: 0, usageEstimated: false, costUsd: 0 })]);
    // The answer stored first wins, but the late run's paid attempt is still in the ledger.
    await results.store(answer(`${task}:1:1`, task, 'first'), [attempt(task, 'successor:1', { outcome: 'ok', costUsd: 0.0006, usageEstimated: false })]);
    const kept = await results.store(answer(`${task}:1:1`, task, 'second'), [attempt(task, 'late:1', { outcome: 'ok', costUsd: 0.0006, usageEstimated: false })]);

    expect(kept.content).toBe('first');
    expect((await rowsOf(task)).map((r) => [r.attempt_id, r.outcome, r.error_class])).toEqual([
      ['late:1', 'ok', null],
      ['slow:1', 'error', 'timeout'],
      ['successor:1', 'ok', null],
    ]);
  });
});
