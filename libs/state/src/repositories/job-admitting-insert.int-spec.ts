/**
 * A job admitted by its own insert (migration 0012, JobRepository.createJobAdmitting): real
 * Postgres with the real migrations. The insert must decide as an admission pass would right
 * after it, and never let the running count pass a limit, however many inserts race.
 */
import { randomUUID } from 'node:crypto';
import { connectDatabase, type DatabaseHandle } from '../database';
import type { NewTaskRow } from '../schema';
import { createTestDatabase, type TestDatabase } from '../testing/test-database';
import { AdmissionRepository } from './admission.repository';
import { JobRepository } from './job.repository';

let database: TestDatabase;
let jobs: JobRepository;

beforeAll(async () => {
  database = await createTestDatabase();
  jobs = new JobRepository(database.db, database.pool);
});

afterAll(async () => {
  await database?.destroy();
});

beforeEach(async () => {
  // The check looks at every tenant's queued jobs: each test starts from an empty table.
  await database.pool.query('delete from agent_task_state');
});

const newTenant = () => `tenant-${randomUUID().slice(0, 8)}`;

function jobRows(tenantId: string, options: { idempotencyKey?: string } = {}): { root: NewTaskRow; tasks: NewTaskRow[] } {
  const jobId = randomUUID();
  const base = { jobId, tenantId, jobType: 'doc_review' };
  const root: NewTaskRow = { ...base, taskId: jobId, parentTaskId: null, agentId: 'supervisor', role: 'job', inputSummary: {}, totalSteps: 1, ...options };
  const extract: NewTaskRow = { ...base, taskId: randomUUID(), parentTaskId: jobId, agentId: 'extract-1', role: 'extract', inputSummary: {}, totalSteps: 2 };
  const synthesize: NewTaskRow = { ...base, taskId: randomUUID(), parentTaskId: jobId, agentId: 'synthesize', role: 'synthesize', inputSummary: {}, totalSteps: 2, dependsOn: [extract.taskId] };
  return { root, tasks: [extract, synthesize] };
}

async function statusesOf(jobId: string): Promise<string[]> {
  const result = await database.pool.query<{ status: string }>('select status from agent_task_state where job_id = $1 order by parent_task_id nulls first, ordinal', [jobId]);
  return result.rows.map((r) => r.status);
}

async function createAdmitting(tenantId: string, limits = { tenant: 2, global: 10 }, repository = jobs) {
  const { root, tasks } = jobRows(tenantId);
  const created = await repository.createJobAdmitting(root, tasks, limits);
  if (!created.created) throw new Error('not created');
  return { jobId: root.taskId, admitted: created.admitted };
}

describe('createJobAdmitting (real Postgres)', () => {
  it('writes every row pending when nothing is queued and the limits allow; queued once the tenant is at its limit', async () => {
    const tenant = newTenant();
    const first = await createAdmitting(tenant);
    const second = await createAdmitting(tenant);
    const third = await createAdmitting(tenant);
    expect([first.admitted, second.admitted, third.admitted]).toEqual([true, true, false]);
    expect(await statusesOf(first.jobId)).toEqual(['pending', 'pending', 'pending']);
    expect(await statusesOf(third.jobId)).toEqual(['queued', 'queued', 'queued']);
  });

  it('leaves a new job queued while any job of any tenant waits, so a pass keeps the order between waiting jobs', async () => {
    const busy = newTenant();
    await createAdmitting(busy, { tenant: 1, global: 10 });
    const waiting = await createAdmitting(busy, { tenant: 1, global: 10 });
    expect(waiting.admitted).toBe(false);
    const other = await createAdmitting(newTenant());
    expect(other.admitted).toBe(false);
    expect(await statusesOf(other.jobId)).toEqual(['queued', 'queued', 'queued']);
  });

  it('leaves a new job queued when the fleet is at its global limit', async () => {
    await createAdmitting(newTenant(), { tenant: 5, global: 2 });
    await createAdmitting(newTenant(), { tenant: 5, global: 2 });
    const third = await createAdmitting(newTenant(), { tenant: 5, global: 2 });
    expect(third.admitted).toBe(false);
  });

  it('a queued job left by it is admitted by a pass as before', async () => {
    const tenant = newTenant();
    await createAdmitting(tenant, { tenant: 1, global: 10 });
    const waiting = await createAdmitting(tenant, { tenant: 1, global: 10 });
    await database.pool.query(`update agent_task_state set status = 'success' where tenant_id = $1 and task_id <> $2 and job_id <> $2`, [tenant, waiting.jobId]);
    const admission = new AdmissionRepository(database.db, database.pool);
    const admitted = await admission.admit(10, (snapshot) => snapshot.queued.map((q) => q.jobId), { global: 10, of: () => 1 });
    expect(admitted.map((a) => a.jobId)).toEqual([waiting.jobId]);
    expect(admitted[0]!.ready).toHaveLength(1);
    expect(await statusesOf(waiting.jobId)).toEqual(['pending', 'pending', 'pending']);
  });

  it('finds the job that holds a repeated idempotency key, and writes nothing', async () => {
    const tenant = newTenant();
    const first = jobRows(tenant, { idempotencyKey: 'key-1' });
    const again = jobRows(tenant, { idempotencyKey: 'key-1' });
    expect(await jobs.createJobAdmitting(first.root, first.tasks, { tenant: 2, global: 10 })).toEqual({ created: true, jobId: first.root.taskId, admitted: true });
    const repeated = await jobs.createJobAdmitting(again.root, again.tasks, { tenant: 2, global: 10 });
    expect(repeated.created).toBe(false);
    if (!repeated.created) expect(repeated.existing.taskId).toBe(first.root.taskId);
    expect(await statusesOf(again.root.taskId)).toEqual([]);
  });

  it('never admits past a limit when many inserts race from two supervisors (two pools)', async () => {
    const second: DatabaseHandle = connectDatabase(database.url, { max: 8, application_name: 'switchyard-test-2' });
    try {
      const repositories = [jobs, new JobRepository(second.db, second.pool)];
      const tenant = newTenant();
      const other = newTenant();
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) => createAdmitting(i % 3 === 0 ? other : tenant, { tenant: 3, global: 5 }, repositories[i % 2])),
      );
      const running = await database.pool.query<{ tenant_id: string; n: number }>(
        `select tenant_id, count(*)::int as n from agent_task_state where parent_task_id is null and status = 'pending' group by tenant_id`,
      );
      const byTenant = Object.fromEntries(running.rows.map((r) => [r.tenant_id, r.n]));
      expect(byTenant[tenant] ?? 0).toBeLessThanOrEqual(3);
      expect(byTenant[other] ?? 0).toBeLessThanOrEqual(3);
      expect((byTenant[tenant] ?? 0) + (byTenant[other] ?? 0)).toBeLessThanOrEqual(5);
      expect(results.filter((r) => r.admitted)).toHaveLength((byTenant[tenant] ?? 0) + (byTenant[other] ?? 0));
      // Once one job is queued, every later insert queues too: at least one admitted, and no job both.
      expect(results.some((r) => r.admitted)).toBe(true);
    } finally {
      await second.close();
    }
  });
});
