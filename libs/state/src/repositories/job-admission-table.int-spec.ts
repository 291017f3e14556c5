/**
 * job_admission (migration 0014) is what every admission decision reads: it must equal, after
 * any change to any root, what the roots themselves say (a row per queued or running job, with
 * `queued` telling which). Real Postgres with the real migrations and the repositories that
 * change roots.
 */
import { randomUUID } from 'node:crypto';
import type { NewTaskRow } from '../schema';
import { createTestDatabase, type TestDatabase } from '../testing/test-database';
import { AdmissionRepository } from './admission.repository';
import { JobRepository } from './job.repository';

let database: TestDatabase;
let jobs: JobRepository;
let admission: AdmissionRepository;

beforeAll(async () => {
  database = await createTestDatabase();
  jobs = new JobRepository(database.db, database.pool);
  admission = new AdmissionRepository(database.db, database.pool);
});

afterAll(async () => {
  await database?.destroy();
});

interface AdmissionRow {
  job_id: string;
  tenant_id: string;
  created_at: string;
  queued: boolean;
}

/** What job_admission should hold, from the roots. */
async function fromRoots(): Promise<AdmissionRow[]> {
  const result = await database.pool.query<AdmissionRow>(`
    select task_id as job_id, tenant_id, created_at::text, status::text = 'queued' as queued from agent_task_state
    where parent_task_id is null and status::text in ('queued', 'pending', 'running', 'paused') order by 1`);
  return result.rows;
}

async function table(): Promise<AdmissionRow[]> {
  return (await database.pool.query<AdmissionRow>('select job_id, tenant_id, created_at::text, queued from job_admission order by 1')).rows;
}

async function expectInStep(): Promise<void> {
  expect(await table()).toEqual(await fromRoots());
}

function jobRows(tenantId: string, status: 'queued' | 'pending'): { root: NewTaskRow; tasks: NewTaskRow[] } {
  const jobId = randomUUID();
  const base = { jobId, tenantId, jobType: 'doc_review', status };
  const root: NewTaskRow = { ...base, taskId: jobId, parentTaskId: null, agentId: 'supervisor', role: 'job', inputSummary: {}, totalSteps: 1 };
  const task: NewTaskRow = { ...base, taskId: randomUUID(), parentTaskId: jobId, agentId: 'extract-1', role: 'extract', inputSummary: {}, totalSteps: 1 };
  return { root, tasks: [task] };
}

async function setRootStatus(jobId: string, status: string): Promise<void> {
  await database.pool.query(`update agent_task_state set status = $2::task_status, updated_at = now() where task_id = $1`, [jobId, status]);
}

describe('job_admission follows the roots (real Postgres)', () => {
  it('through submission, admission, the run, the end, cancel, retry and deletion', async () => {
    const tenant = `tenant-${randomUUID().slice(0, 8)}`;
    const queued = jobRows(tenant, 'queued');
    await jobs.createJob(queued.root, queued.tasks);
    // Behind a queued job, the insert leaves this one queued too (a pass decides).
    const second = jobRows(tenant, 'pending');
    expect(await jobs.createJobAdmitting(second.root, second.tasks, { tenant: 5, global: 5 })).toMatchObject({ created: true, admitted: false });
    await expectInStep();
    expect((await table()).map((r) => r.queued)).toEqual([true, true]);

    // Admitted by a pass, oldest first: the same rows, no longer queued.
    const admitted = await admission.admit(5, (snapshot) => snapshot.queued.map((q) => q.jobId), { global: 5, of: () => 5 });
    expect(admitted.map((a) => a.jobId)).toEqual([queued.root.taskId, second.root.taskId]);
    await expectInStep();
    expect((await table()).map((r) => r.queued)).toEqual([false, false]);

    // Running, paused and back: still holding its slot.
    for (const status of ['running', 'paused', 'running']) {
      await setRootStatus(queued.root.taskId, status);
      await expectInStep();
    }

    // Ends: gone. Retried: queued again. Cancelled: gone.
    await setRootStatus(queued.root.taskId, 'failed');
    expect((await table()).map((r) => r.job_id)).not.toContain(queued.root.taskId);
    const retried = await jobs.retryJob(tenant, queued.root.taskId);
    expect(retried).toMatchObject({ retried: true });
    await expectInStep();
    expect((await table()).find((r) => r.job_id === queued.root.taskId)?.queued).toBe(true);
    expect(await admission.queuePosition(tenant, queued.root.taskId)).toBe(1);
    expect(await jobs.cancelJob(tenant, queued.root.taskId)).toMatchObject({ cancelled: true });
    await expectInStep();

    // A job removed because its queue entries could not be written: gone with its root.
    await jobs.deleteJob(tenant, second.root.taskId);
    await expectInStep();
    expect(await table()).toEqual([]);
  });

  it('is emptied with the task table by TRUNCATE, which fires no row trigger', async () => {
    const { root, tasks } = jobRows(`tenant-${randomUUID().slice(0, 8)}`, 'pending');
    await jobs.createJob(root, tasks);
    expect((await table()).length).toBeGreaterThan(0);
    await database.pool.query('truncate agent_task_state cascade');
    expect(await table()).toEqual([]);
  });

  it('stays equal to the roots through many random changes, including rolled-back ones', async () => {
    const tenants = ['t1', 't2', 't3'].map((t) => `${t}-${randomUUID().slice(0, 6)}`);
    const ids: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      const { root, tasks } = jobRows(tenants[i % 3]!, i % 2 === 0 ? 'queued' : 'pending');
      await jobs.createJob(root, tasks);
      ids.push(root.taskId);
    }
    const statuses = ['queued', 'pending', 'running', 'paused', 'success', 'failed', 'cancelled'];
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let step = 0; step < 80; step += 1) {
      const jobId = ids[next(ids.length)]!;
      const status = statuses[next(statuses.length)]!;
      if (step % 10 === 9) {
        const client = await database.pool.connect();
        try {
          await client.query('begin');
          await client.query(`update agent_task_state set status = $2::task_status where task_id = $1`, [jobId, status]);
          await client.query('rollback');
        } finally {
          client.release();
        }
      } else {
        await setRootStatus(jobId, status);
      }
      await expectInStep();
    }
  });
});
