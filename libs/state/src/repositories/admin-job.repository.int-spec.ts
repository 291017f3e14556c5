import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { agentTaskState, type NewLedgerRow, type NewTaskRow } from '../schema';
import { createTestDatabase, type TestDatabase } from '../testing/test-database';
import { AdminJobRepository } from './admin-job.repository';
import { LedgerRepository } from './ledger.repository';
import { JobRepository } from './job.repository';

// Real Postgres with the real migrations; nothing mocked.
let database: TestDatabase;
let admin: AdminJobRepository;
let tasks: JobRepository;
let ledger: LedgerRepository;

beforeAll(async () => {
  database = await createTestDatabase();
  admin = new AdminJobRepository(database.db);
  tasks = new JobRepository(database.db, database.pool);
  ledger = new LedgerRepository(database.db);
});

afterAll(async () => {
  await database?.destroy();
});

const newTenant = () => `tenant-${randomUUID().slice(0, 8)}`;

async function createJob(tenantId: string, jobType = 'doc_review'): Promise<{ jobId: string; taskId: string }> {
  const jobId = randomUUID();
  const taskId = randomUUID();
  const base = { jobId, tenantId, jobType };
  const root: NewTaskRow = { ...base, taskId: jobId, parentTaskId: null, agentId: 'supervisor', role: 'job', inputSummary: { question: 'q' }, totalSteps: 1 };
  const task: NewTaskRow = { ...base, taskId, parentTaskId: jobId, agentId: 'extract-1', role: 'extract', inputSummary: { text: 'secret text' }, totalSteps: 2 };
  await tasks.createJob(root, [task]);
  return { jobId, taskId };
}

function attempt(tenantId: string, at: Date, overrides: Partial<NewLedgerRow> = {}): NewLedgerRow {
  return {
    at,
    source: 'worker',
    tenantId,
    target: 'local_vllm_7b',
    targetType: 'local',
    model: 'qwen',
    rule: 'fallback',
    outcome: 'ok',
    latencyMs: 10,
    costUsd: 0.001,
    ...overrides,
  };
}

describe('AdminJobRepository', () => {
  it('lists jobs of every tenant, filtered by tenant, type and status, newest first', async () => {
    const [a, b] = [newTenant(), newTenant()];
    const first = await createJob(a);
    const second = await createJob(b, 'incident_triage');
    await database.db.update(agentTaskState).set({ status: 'success' }).where(eq(agentTaskState.taskId, second.jobId));

    const both = (await admin.listJobs({ limit: 100 })).map((r) => r.taskId);
    expect(both.indexOf(second.jobId)).toBeLessThan(both.indexOf(first.jobId));
    expect(both.indexOf(first.jobId)).toBeGreaterThanOrEqual(0);
    expect((await admin.listJobs({ tenantId: a, limit: 10 })).map((r) => r.taskId)).toEqual([first.jobId]);
    expect((await admin.listJobs({ type: 'incident_triage', tenantId: b, limit: 10 })).map((r) => r.taskId)).toEqual([second.jobId]);
    expect(await admin.listJobs({ status: 'success', tenantId: a, limit: 10 })).toEqual([]);
  });

  it("reads any tenant's job tree with step names but not step content, and its upstream attempts", async () => {
    const tenant = newTenant();
    const job = await createJob(tenant);
    await database.db
      .update(agentTaskState)
      .set({ stepCheckpoints: [{ step: 1, name: 'extract_facts', summary: { raw: 'model text' }, completed_at: '2030-01-01T00:00:00.000Z' }] })
      .where(eq(agentTaskState.taskId, job.taskId));
    await ledger.insertMany([attempt(tenant, new Date(), { jobId: job.jobId, taskId: job.taskId, step: 1, traceId: 'abc123' })]);

    const tree = await admin.findJobTree(job.jobId);
    expect(tree.map((r) => r.taskId)).toEqual([job.jobId, job.taskId]);
    expect(tree[1]?.steps).toEqual([{ step: 1, name: 'extract_facts', completed_at: '2030-01-01T00:00:00.000Z' }]);
    expect(JSON.stringify(tree)).not.toContain('model text');
    expect(await admin.jobAttempts(job.jobId)).toEqual([expect.objectContaining({ taskId: job.taskId, target: 'local_vllm_7b', traceId: 'abc123' })]);
    expect(await admin.findJobTree(randomUUID())).toEqual([]);
  });

  it('sums the ledger per time bucket and target, with the target type', async () => {
    const tenant = newTenant();
    const since = new Date(Date.UTC(2002, 0, 1));
    const at = (minutes: number) => new Date(since.getTime() + minutes * 60_000);
    await ledger.insertMany([
      attempt(tenant, at(1)),
      attempt(tenant, at(2), { outcome: 'error' }),
      attempt(tenant, at(7), { target: 'cloud_main', targetType: 'cloud', costUsd: 0.01 }),
    ]);
    const points = await admin.costSeries({ by: 'target', since, until: at(10), bucketSeconds: 300 });
    expect(points).toEqual([
      { bucket: since, key: 'local_vllm_7b', targetType: 'local', calls: 2, errors: 1, costUsd: 0.002 },
      { bucket: at(5), key: 'cloud_main', targetType: 'cloud', calls: 1, errors: 0, costUsd: 0.01 },
    ]);
    const byTenant = await admin.costSeries({ by: 'tenant', since, until: at(10), bucketSeconds: 600 });
    expect(byTenant).toEqual([{ bucket: since, key: tenant, targetType: null, calls: 3, errors: 1, costUsd: 0.012 }]);
  });
});
