import { randomUUID } from 'node:crypto';
import type { NewLedgerRow } from '../schema';
import { createTestDatabase, type TestDatabase } from '../testing/test-database';
import { LedgerRepository, type CostGroup } from './ledger.repository';

// Real Postgres with the real migrations; nothing mocked.
let database: TestDatabase;
let repo: LedgerRepository;

beforeAll(async () => {
  database = await createTestDatabase();
  repo = new LedgerRepository(database.db);
});

afterAll(async () => {
  await database?.destroy();
});

const newTenant = () => `tenant-${randomUUID().slice(0, 8)}`;

function row(tenantId: string, at: Date, overrides: Partial<NewLedgerRow> = {}): NewLedgerRow {
  return {
    at,
    source: 'worker',
    tenantId,
    jobId: randomUUID(),
    taskId: randomUUID(),
    step: 1,
    businessType: 'doc_review',
    target: 'local_vllm_7b',
    targetType: 'local',
    model: 'qwen2.5-7b-instruct',
    rule: 'fallback',
    outcome: 'ok',
    inputTokens: 100,
    outputTokens: 20,
    latencyMs: 100,
    costUsd: 0.001,
    traceId: 'trace-1',
    ...overrides,
  };
}

const byKey = (groups: CostGroup[]) => Object.fromEntries(groups.map((g) => [g.key ?? '(null)', g]));

describe('LedgerRepository', () => {
  // A window of its own per test (a distinct day far in the past) keeps tests apart even across tenants.
  let dayCounter = 0;
  const window = () => {
    dayCounter += 1;
    const since = new Date(Date.UTC(2001, 0, dayCounter * 3));
    return { since, until: new Date(since.getTime() + 2 * 86_400_000), at: (hours: number) => new Date(since.getTime() + hours * 3_600_000) };
  };

  it('inserts a batch and sums it per target, with error counts and latency percentiles', async () => {
    const tenant = newTenant();
    const w = window();
    const latencies = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
    await repo.insertMany([
      ...latencies.map((latencyMs) => row(tenant, w.at(1), { latencyMs })),
      row(tenant, w.at(2), { target: 'cloud_main', targetType: 'cloud', model: 'gpt', inputTokens: 1000, outputTokens: 500, costUsd: 0.05 }),
      row(tenant, w.at(3), { target: 'cloud_main', targetType: 'cloud', model: 'gpt', outcome: 'error', errorClass: 'server', httpStatus: 500, inputTokens: 0, outputTokens: 0, costUsd: 0 }),
    ]);

    const report = await repo.costReport({ groupBy: 'target', since: w.since, until: w.until, tenantId: tenant });
    expect(report.groups.map((g) => g.key)).toEqual(['cloud_main', 'local_vllm_7b']); // most expensive first
    const groups = byKey(report.groups);
    expect(groups.local_vllm_7b).toMatchObject({ calls: 10, inputTokens: 1000, outputTokens: 200, errors: 0, latencyP50Ms: 55 });
    expect(groups.local_vllm_7b!.costUsd).toBeCloseTo(0.01, 10);
    expect(groups.local_vllm_7b!.latencyP95Ms).toBeCloseTo(95.5, 5);
    expect(groups.cloud_main).toMatchObject({ calls: 2, inputTokens: 1000, outputTokens: 500, errors: 1 });
    expect(report.totals).toMatchObject({ calls: 12, inputTokens: 2000, outputTokens: 700, errors: 1 });
    expect(report.totals.costUsd).toBeCloseTo(0.06, 10);
  });

  it('groups by model, tenant, business type, outcome and UTC day', async () => {
    const [a, b] = [newTenant(), newTenant()];
    const w = window();
    await repo.insertMany([
      row(a, w.at(1), { model: 'm1', businessType: 'doc_review' }),
      row(a, w.at(2), { model: 'm2', businessType: null, outcome: 'bad_output' }),
      row(b, w.at(25), { model: 'm1', businessType: 'chat', outcome: 'error', errorClass: 'timeout' }),
    ]);
    const report = (groupBy: Parameters<LedgerRepository['costReport']>[0]['groupBy']) =>
      repo.costReport({ groupBy, since: w.since, until: w.until, tenantId: null });

    const keysAndCalls = (groups: CostGroup[]) => Object.fromEntries(Object.entries(byKey(groups)).map(([k, g]) => [k, g.calls]));
    expect(keysAndCalls((await report('model')).groups)).toEqual({ m1: 2, m2: 1 });
    expect(keysAndCalls((await report('tenant')).groups)).toEqual({ [a]: 2, [b]: 1 });
    expect(keysAndCalls((await report('business_type')).groups)).toEqual({ doc_review: 1, chat: 1, '(null)': 1 });
    const outcomes = byKey((await report('outcome')).groups);
    expect(Object.fromEntries(Object.entries(outcomes).map(([k, g]) => [k, [g.calls, g.errors]]))).toEqual({ ok: [1, 0], bad_output: [1, 1], error: [1, 1] });
    const day0 = w.since.toISOString().slice(0, 10);
    const day1 = new Date(w.since.getTime() + 86_400_000).toISOString().slice(0, 10);
    expect(keysAndCalls((await report('day')).groups)).toEqual({ [day0]: 2, [day1]: 1 });
  });

  it('counts an attempt still in flight as a call but not as an error; an abandoned one is an error', async () => {
    const tenant = newTenant();
    const w = window();
    await repo.insertMany([
      row(tenant, w.at(1)),
      row(tenant, w.at(2), { outcome: 'in_flight', outputTokens: 0, usageEstimated: true, latencyMs: 0 }),
      row(tenant, w.at(3), { outcome: 'abandoned', outputTokens: 0, usageEstimated: true, latencyMs: 0 }),
    ]);
    const report = await repo.costReport({ groupBy: 'outcome', since: w.since, until: w.until, tenantId: tenant });
    expect(Object.fromEntries(report.groups.map((g) => [g.key, [g.calls, g.errors]]))).toEqual({ ok: [1, 0], in_flight: [1, 0], abandoned: [1, 1] });
    expect(report.totals).toMatchObject({ calls: 3, errors: 1 });
  });

  it('filters by tenant and by the [since, until) window', async () => {
    const [a, b] = [newTenant(), newTenant()];
    const w = window();
    await repo.insertMany([row(a, w.since), row(a, w.at(5)), row(b, w.at(5)), row(a, w.until), row(a, new Date(w.since.getTime() - 1))]);

    const onlyA = await repo.costReport({ groupBy: 'tenant', since: w.since, until: w.until, tenantId: a });
    expect(onlyA.groups).toHaveLength(1);
    expect(onlyA.groups[0]).toMatchObject({ key: a, calls: 2 });
    expect(onlyA.totals.calls).toBe(2);

    const everyone = await repo.costReport({ groupBy: 'tenant', since: w.since, until: w.until, tenantId: null });
    expect(everyone.totals.calls).toBe(3);
  });

  it('answers an empty window with no groups and zero totals', async () => {
    const w = window();
    const report = await repo.costReport({ groupBy: 'target', since: w.since, until: w.until, tenantId: newTenant() });
    expect(report.groups).toEqual([]);
    expect(report.totals).toEqual({ calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, errors: 0, latencyP50Ms: null, latencyP95Ms: null });
  });

  it('writes a batch larger than one INSERT carries, all of it', async () => {
    const tenant = newTenant();
    const w = window();
    await repo.insertMany(Array.from({ length: 2_345 }, (_, i) => row(tenant, w.at(1 + (i % 10)))));
    const report = await repo.costReport({ groupBy: 'target', since: w.since, until: w.until, tenantId: tenant });
    expect(report.totals.calls).toBe(2_345);
  });

  it('ignores an empty batch', async () => {
    await expect(repo.insertMany([])).resolves.toBeUndefined();
  });
});
