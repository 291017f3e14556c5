import { RequestMetaSchema } from '@switchyard/contracts';
import type { ModelCallResultRow } from '@switchyard/state';
import { IdempotentModelRouter, type ModelCallResultStore } from './idempotent-model-router';
import type { ModelChatRequest, ModelChatResult, ModelRouter } from './model-router.port';

class MemoryStore implements ModelCallResultStore {
  readonly rows = new Map<string, ModelCallResultRow>();
  async find(key: string) {
    return this.rows.get(key);
  }
  async store(row: Omit<ModelCallResultRow, 'createdAt'>) {
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
