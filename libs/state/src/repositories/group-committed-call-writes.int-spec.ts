import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../testing/test-database';
import { AttemptLedgerRepository, type AttemptLedgerRow } from './attempt-ledger.repository';
import { GroupCommittedAttemptLedger, GroupCommittedCallResults } from './group-committed-call-writes';
import { ModelCallResultRepository, type NewModelCallResult } from './model-call-result.repository';

// Real Postgres with the real migrations; nothing mocked.
let database: TestDatabase;
let ledger: GroupCommittedAttemptLedger;
let results: GroupCommittedCallResults;
let statements: string[];

beforeAll(async () => {
  database = await createTestDatabase();
  // Every statement the pool sends, by its leading comment or its first words.
  statements = [];
  const query = database.pool.query.bind(database.pool) as (...args: unknown[]) => unknown;
  database.pool.query = ((...args: unknown[]) => {
    const first = args[0] as string | { text: string };
    statements.push(typeof first === 'string' ? first : first.text);
    return query(...args);
  }) as typeof database.pool.query;
  ledger = new GroupCommittedAttemptLedger(new AttemptLedgerRepository(database.db, database.pool));
  results = new GroupCommittedCallResults(new ModelCallResultRepository(database.db, database.pool));
});

beforeEach(() => {
  statements.length = 0;
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
    target: 'local_vllm_7b',
    targetType: 'local',
    model: 'qwen',
    rule: 'fallback',
    outcome: 'in_flight',
    inputTokens: 120,
    usageEstimated: true,
    latencyMs: 0,
    costUsd: 0.00001,
    attemptId,
    ...overrides,
  };
}

function answer(key: string, taskId: string, content: string): NewModelCallResult {
  return { idempotencyKey: key, tenantId: 'acme', taskId, content, target: 'local_vllm_7b', model: 'qwen', rule: 'fallback', usage: { inputTokens: 120, outputTokens: 40 }, costUsd: 0.00002 };
}

async function ledgerRows(taskIds: string[]) {
  const { rows } = await database.pool.query<{ task_id: string; attempt_id: string; outcome: string }>(
    'select task_id, attempt_id, outcome from model_call_ledger where task_id = any($1::uuid[]) order by attempt_id',
    [taskIds],
  );
  return rows;
}

async function storedAnswers(keys: string[]) {
  const { rows } = await database.pool.query<{ idempotency_key: string; content: string }>(
    'select idempotency_key, content from model_call_results where idempotency_key = any($1) order by idempotency_key',
    [keys],
  );
  return rows;
}

const finished = (row: AttemptLedgerRow): AttemptLedgerRow => ({ ...row, outcome: 'ok', outputTokens: 40, usageEstimated: false, latencyMs: 5 });

describe('group-committed paid-once store and attempt ledger', () => {
  it('writes the calls of many concurrent tasks in fewer statements, each row once', async () => {
    const tasks = Array.from({ length: 30 }, () => randomUUID());
    const started = tasks.map((task) => attempt(task, `${task}:1`));
    await Promise.all(started.map((row) => ledger.recordStarted(row, { abandonEarlier: true })));
    const lookups = await Promise.all(tasks.map((task) => results.find(`${task}:1:1`)));
    const kept = await Promise.all(tasks.map((task, i) => results.store(answer(`${task}:1:1`, task, `answer ${i}`), [finished(started[i]!)])));

    expect(lookups.every((row) => row === undefined)).toBe(true);
    expect(kept.map((row) => row.content)).toEqual(tasks.map((_, i) => `answer ${i}`));
    expect(kept.every((row) => row.createdAt instanceof Date)).toBe(true);
    const rows = await ledgerRows(tasks);
    expect(rows).toHaveLength(30);
    expect(rows.every((row) => row.outcome === 'ok')).toBe(true);
    expect(await storedAnswers(tasks.map((task) => `${task}:1:1`))).toHaveLength(30);
    // 90 writes and reads of 30 calls; grouped, far fewer statements (the first two of each kind go alone).
    expect(statements.filter((s) => !s.startsWith('select task_id') && !s.startsWith('select idempotency_key')).length).toBeLessThan(30);
  });

  it('marks earlier runs in flight abandoned only for the tasks whose first attempt is in the batch', async () => {
    const [dead, other, quiet] = [randomUUID(), randomUUID(), randomUUID()];
    await ledger.recordStarted(attempt(dead, 'dead-run:1'), { abandonEarlier: true });
    await ledger.recordStarted(attempt(quiet, 'quiet-run:1'), { abandonEarlier: true });
    await Promise.all([
      ledger.recordStarted(attempt(other, 'other:1'), { abandonEarlier: true }),
      ledger.recordStarted(attempt(other, 'other:0'), { abandonEarlier: false }),
      ledger.recordStarted(attempt(dead, 'next-run:1'), { abandonEarlier: true }),
      ledger.recordStarted(attempt(randomUUID(), 'filler:1'), { abandonEarlier: true }),
    ]);
    expect((await ledgerRows([dead, quiet])).map((r) => [r.attempt_id, r.outcome])).toEqual([
      ['dead-run:1', 'abandoned'],
      ['next-run:1', 'in_flight'],
      ['quiet-run:1', 'in_flight'],
    ]);
  });

  it('when a batch fails part-way, every other call is stored once and only the refused one fails', async () => {
    const tasks = Array.from({ length: 8 }, () => randomUUID());
    const started = tasks.map((task) => attempt(task, `${task}:1`));
    await Promise.all(started.map((row) => ledger.recordStarted(row, { abandonEarlier: true })));
    // A NUL character cannot be stored in jsonb: Postgres refuses the statement that carries it.
    const contents = tasks.map((_, i) => (i === 5 ? 'bad \u0000 answer' : `answer ${i}`));
    const outcomes = await Promise.all(
      tasks.map((task, i) =>
        results.store(answer(`${task}:1:1`, task, contents[i]!), [finished(started[i]!)]).then(
          (row) => row.content,
          (error: Error) => `failed: ${error.message}`,
        ),
      ),
    );

    expect(outcomes.filter((o) => o.startsWith('failed'))).toEqual(['failed: unsupported Unicode escape sequence']);
    expect(outcomes[5]).toMatch(/^failed/);
    expect(statements.some((s) => s.includes('sy:storeCallResults'))).toBe(true);
    const good = tasks.filter((_, i) => i !== 5);
    expect((await storedAnswers(good.map((task) => `${task}:1:1`))).map((r) => r.content).sort()).toEqual(contents.filter((_, i) => i !== 5).sort());
    expect(await storedAnswers([`${tasks[5]}:1:1`])).toEqual([]);
    const rows = await ledgerRows(tasks);
    expect(rows).toHaveLength(8);
    // The refused call's attempt is still in flight (its answer was never stored); every other is completed once.
    expect(rows.filter((r) => r.outcome === 'ok').map((r) => r.task_id).sort()).toEqual([...good].sort());
    expect(rows.find((r) => r.task_id === tasks[5])?.outcome).toBe('in_flight');
  });

  it('gives every run of a step the answer stored first, also when two runs store in the same batch', async () => {
    const task = randomUUID();
    const key = `${task}:1:1`;
    const fillers = Array.from({ length: 2 }, () => randomUUID());
    const kept = await Promise.all([
      ...fillers.map((filler) => results.store(answer(`${filler}:1:1`, filler, 'filler'))),
      results.store(answer(key, task, 'first run')),
      results.store(answer(key, task, 'second run')),
    ]);
    const [one, two] = kept.slice(2);
    expect(one!.content).toBe(two!.content);
    expect((await storedAnswers([key])).map((r) => r.content)).toEqual([one!.content]);
    expect(await results.find(key)).toMatchObject({ content: one!.content });
    // The lookup's row has every column with its JavaScript type (the statement maps the names itself).
    const found = await results.find(key);
    expect({ ...found, createdAt: undefined }).toEqual({ ...answer(key, task, one!.content), createdAt: undefined });
    expect(found!.createdAt).toBeInstanceOf(Date);
  });
});
