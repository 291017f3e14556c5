import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { loadConfig } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { TenantsConfigStore } from '@switchyard/platform';
import { AdmissionRepository, JobRepository, connectDatabase, type DatabaseHandle, type NewTaskRow } from '@switchyard/state';
import { createTestDatabase, type TestDatabase } from '@switchyard/state/testing/test-database';
import type { JobNotifications } from '../notifications/job-notifications';
import { AdmissionService } from './admission.service';
import type { JobStarter } from './job-starter';

/*
 * Real: Postgres with the real migrations, the admission transaction, the decision, the
 * tenants file. Replaced: the job starter (records the jobs it is asked to start) and the
 * NOTIFY listener (not needed: passes are called directly).
 */

let database: TestDatabase;
let second: DatabaseHandle;
let dir: string;
const logger = createLogger('test', 'silent');

beforeAll(async () => {
  database = await createTestDatabase();
  second = connectDatabase(database.url, { max: 4 });
  dir = mkdtempSync(join(tmpdir(), 'switchyard-admission-'));
});

afterAll(async () => {
  await second?.close();
  await database?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

function tenantsFile(yaml: string): string {
  const path = join(dir, `${randomUUID()}.yaml`);
  writeFileSync(path, yaml);
  return path;
}

/** An admission service on its own pool, as one supervisor has. */
function supervisor(handle: DatabaseHandle, tenantsPath: string, started: string[]): AdmissionService {
  const config = loadConfig({ TENANTS_CONFIG: tenantsPath });
  const starter: JobStarter = { start: async ({ jobId }) => void started.push(jobId) };
  const notifications = { on: () => () => undefined } as unknown as JobNotifications;
  return new AdmissionService(new AdmissionRepository(handle.db), new TenantsConfigStore(config, logger), notifications, starter, config, logger);
}

async function submitQueued(tenantId: string, createdAt: Date): Promise<string> {
  const jobId = randomUUID();
  const base = { jobId, tenantId, jobType: 'doc_review', status: 'queued' as const, createdAt };
  const root: NewTaskRow = { ...base, taskId: jobId, parentTaskId: null, agentId: 'supervisor', role: 'job', inputSummary: {}, totalSteps: 2 };
  const task: NewTaskRow = { ...base, taskId: randomUUID(), parentTaskId: jobId, agentId: 'extract-1', role: 'extract', inputSummary: {}, totalSteps: 2 };
  await new JobRepository(database.db).createJob(root, [task]);
  return jobId;
}

async function runningByTenant(tenants: string[]): Promise<Record<string, string[]>> {
  const result = await database.db.execute<{ tenant_id: string; job_id: string }>(sql`
    select tenant_id, task_id as job_id from agent_task_state
    where parent_task_id is null and status in ('pending', 'running', 'paused')
      and tenant_id = any(string_to_array(${tenants.join(',')}, ','))`);
  const running: Record<string, string[]> = Object.fromEntries(tenants.map((t) => [t, []]));
  for (const row of result.rows) running[row.tenant_id]!.push(row.job_id);
  return running;
}

async function finish(jobId: string): Promise<void> {
  await database.db.execute(sql`update agent_task_state set status = 'success', finished_at = now() where job_id = ${jobId}`);
}

describe('admission across two supervisors (real Postgres)', () => {
  it('three concurrent passes from two pools never run more than a tenant limit or the global limit, and admit each tenant first in, first out', async () => {
    const [a, b, c] = ['a', 'b', 'c'].map((name) => `${name}-${randomUUID().slice(0, 8)}`) as [string, string, string];
    const path = tenantsFile(`defaults: {max_running_jobs: 2}\nglobal: {max_running_jobs: 4}\ntenants:\n  ${b}: {max_running_jobs: 3}\n  ${c}: {max_running_jobs: 1}\n`);
    const limits: Record<string, number> = { [a]: 2, [b]: 3, [c]: 1 };
    const submitted: Record<string, string[]> = { [a]: [], [b]: [], [c]: [] };
    const t0 = Date.now();
    for (let i = 0; i < 24; i += 1) {
      const tenant = [a, a, b, c][i % 4]!;
      submitted[tenant]!.push(await submitQueued(tenant, new Date(t0 + i)));
    }
    const startedOne: string[] = [];
    const startedTwo: string[] = [];
    const one = supervisor(database, path, startedOne);
    const two = supervisor(second, path, startedTwo);

    const admittedOrder: Record<string, string[]> = { [a]: [], [b]: [], [c]: [] };
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 200; round += 1) {
      const passes = await Promise.all([one.admitNow(), two.admitNow(), two.admitNow()]);
      const running = await runningByTenant([a, b, c]);
      const total = Object.values(running).reduce((sum, jobs) => sum + jobs.length, 0);
      expect(total).toBeLessThanOrEqual(4);
      for (const tenant of [a, b, c]) expect(running[tenant]!.length).toBeLessThanOrEqual(limits[tenant]!);
      for (const jobId of passes.flat()) {
        const tenant = Object.keys(submitted).find((t) => submitted[t]!.includes(jobId))!;
        admittedOrder[tenant]!.push(jobId);
      }
      // First in, first out: what a tenant has had admitted so far is always the head of its submissions.
      for (const tenant of [a, b, c]) {
        const count = admittedOrder[tenant]!.length;
        expect(new Set(admittedOrder[tenant])).toEqual(new Set(submitted[tenant]!.slice(0, count)));
      }
      const all = Object.values(running).flat();
      if (all.length === 0 && Object.values(admittedOrder).flat().length === 24) break;
      // Some running jobs end, at random, as workers would finish them.
      for (const jobId of all) if (random() < 0.5) await finish(jobId);
    }

    // Every job was admitted exactly once, by one of the two, and started by the one that admitted it.
    expect(Object.values(admittedOrder).flat()).toHaveLength(24);
    expect(new Set([...startedOne, ...startedTwo]).size).toBe(24);
    expect(startedOne.length + startedTwo.length).toBe(24);
    for (const tenant of [a, b, c]) expect(new Set(admittedOrder[tenant])).toEqual(new Set(submitted[tenant]));
  });

  it('reports a queued job position within its tenant and none once admitted', async () => {
    const tenant = `p-${randomUUID().slice(0, 8)}`;
    const path = tenantsFile(`defaults: {max_running_jobs: 1}\n`);
    const t0 = Date.now();
    const jobs = [await submitQueued(tenant, new Date(t0)), await submitQueued(tenant, new Date(t0 + 1)), await submitQueued(tenant, new Date(t0 + 2))];
    const repository = new AdmissionRepository(database.db);
    expect(await Promise.all(jobs.map((id) => repository.queuePosition(tenant, id)))).toEqual([1, 2, 3]);
    await supervisor(database, path, []).admitNow();
    expect(await Promise.all(jobs.map((id) => repository.queuePosition(tenant, id)))).toEqual([null, 1, 2]);
    expect(await repository.queuePosition('another-tenant', jobs[1]!)).toBeNull();
  });

  it('cancels a queued job with its tasks, and never admits it afterwards', async () => {
    const tenant = `c-${randomUUID().slice(0, 8)}`;
    const path = tenantsFile(`defaults: {max_running_jobs: 1}\n`);
    const t0 = Date.now();
    const running = await submitQueued(tenant, new Date(t0));
    const waiting = await submitQueued(tenant, new Date(t0 + 1));
    const started: string[] = [];
    const admission = supervisor(database, path, started);
    expect(await admission.admitNow()).toEqual([running]);

    expect(await new JobRepository(database.db).cancelJob(tenant, waiting)).toEqual({ status: 'cancelled', cancelled: true });
    const statuses = await database.db.execute<{ status: string }>(sql`select status from agent_task_state where job_id = ${waiting}`);
    expect(statuses.rows.map((r) => r.status)).toEqual(['cancelled', 'cancelled']);
    await finish(running);
    expect(await admission.admitNow()).toEqual([]);
    expect(started).toEqual([running]);
  });

  it('returns with each admitted job the tasks that may start now: none that waits for another task of the job', async () => {
    const tenant = `r-${randomUUID().slice(0, 8)}`;
    const jobId = randomUUID();
    const [first, second, after] = [randomUUID(), randomUUID(), randomUUID()];
    const base = { jobId, tenantId: tenant, jobType: 'doc_review', status: 'queued' as const, inputSummary: {}, totalSteps: 2, traceContext: { traceparent: 'tp' } };
    const task = (taskId: string, ordinal: number, dependsOn: string[] = []): NewTaskRow => ({ ...base, taskId, parentTaskId: jobId, agentId: `a-${ordinal}`, role: 'extract', ordinal, dependsOn });
    const root: NewTaskRow = { ...base, taskId: jobId, parentTaskId: null, agentId: 'supervisor', role: 'job' };
    await new JobRepository(database.db).createJob(root, [task(second, 1), task(first, 0), task(after, 2, [first, second])]);

    const admitted = await new AdmissionRepository(database.db).admit(10, (snapshot) => snapshot.queued.filter((job) => job.jobId === jobId).map((job) => job.jobId));
    expect(admitted).toEqual([
      {
        jobId,
        ready: [first, second].map((taskId) => ({ taskId, jobId, tenantId: tenant, role: 'extract', traceContext: { traceparent: 'tp' } })),
      },
    ]);
    const statuses = await database.db.execute<{ status: string }>(sql`select distinct status from agent_task_state where job_id = ${jobId}`);
    expect(statuses.rows).toEqual([{ status: 'pending' }]);
  });

  it('an optimistic admit writes nothing when another pass admitted since its read, or its job is no longer queued; the pass then decides again', async () => {
    const tenant = `o-${randomUUID().slice(0, 8)}`;
    const [a, b] = [await submitQueued(tenant, new Date(Date.now() - 1000)), await submitQueued(tenant, new Date())];
    const admit = (running: Record<string, number>, jobs: string[]) =>
      database.pool.query<{ admitted: boolean }>('select admitted from switchyard_admit($1::jsonb, $2::uuid[], null, null)', [JSON.stringify(running), jobs]);
    const admitWithin = (limit: number, jobs: string[]) =>
      database.pool.query<{ admitted: boolean; jobs: string[] }>('select admitted, jobs from switchyard_admit($1::jsonb, $2::uuid[], $3::jsonb, $4::int)', ['{}', jobs, JSON.stringify({ [tenant]: limit }), 1_000_000]);
    const statusOf = async (jobId: string) =>
      (await database.pool.query<{ status: string }>('select status from agent_task_state where task_id = $1', [jobId])).rows[0]?.status;

    // What a decision saw: the tenant runs no job (other tests' tenants run theirs).
    const seen = (await database.pool.query<{ running: Record<string, number> }>('select running from switchyard_admission_snapshot(10)')).rows[0]!.running;
    expect(seen[tenant]).toBeUndefined();
    // Another pass admitted a since that read: b is not admitted on the stale count.
    expect((await admit(seen, [a])).rows[0]!.admitted).toBe(true);
    expect((await admit(seen, [b])).rows[0]!.admitted).toBe(false);
    expect(await statusOf(b)).toBe('queued');
    // A job no longer queued (a, admitted above) is refused, and nothing else of the choice is written.
    expect((await admit({ ...seen, [tenant]: 1 }, [a, b])).rows[0]!.admitted).toBe(false);
    expect(await statusOf(b)).toBe('queued');
    // With the limits: the tenant runs 1 (a) now; b fits a limit of 2, not of 1, whatever the counts seen.
    expect((await admitWithin(1, [b])).rows[0]!.admitted).toBe(false);
    expect(await statusOf(b)).toBe('queued');
    expect((await admitWithin(2, [b])).rows[0]!.admitted).toBe(true);
    expect(await statusOf(b)).toBe('pending');
    await database.pool.query(`update agent_task_state set status = 'queued' where job_id = $1`, [b]);
    // A choice of which another pass admitted a part: the rest is admitted (still oldest first), within the limits.
    expect((await admitWithin(2, [a, b])).rows[0]).toEqual({ admitted: true, jobs: [b] });
    expect(await statusOf(b)).toBe('pending');
    await database.pool.query(`update agent_task_state set status = 'queued' where job_id = $1`, [b]);

    // The repository: a pass whose read went stale before its admit decides again. Here another
    // supervisor's pass admits b between this pass's read and its admit.
    const pool = database.pool;
    const spy = Object.create(pool) as typeof pool;
    let raced = false;
    spy.query = (async (...args: unknown[]) => {
      const first = args[0] as { name?: string };
      if (!raced && first?.name === 'sy-admit-if-unchanged') {
        raced = true;
        await new AdmissionRepository(database.db).admit(10, (snapshot) => snapshot.queued.filter((job) => job.jobId === b).map((job) => job.jobId));
      }
      return (pool.query as (...a: unknown[]) => unknown).apply(pool, args);
    }) as typeof pool.query;
    const sawB: boolean[] = [];
    const admitted = await new AdmissionRepository(database.db, spy).admit(10, (snapshot) => {
      sawB.push(snapshot.queued.some((job) => job.jobId === b));
      return snapshot.queued.filter((job) => job.jobId === b).map((job) => job.jobId);
    });
    // The first admit was refused (b was admitted by the other pass); the second decision no longer sees b.
    expect(raced).toBe(true);
    expect(sawB[0]).toBe(true);
    expect(sawB.slice(1)).not.toContain(true);
    expect(admitted).toEqual([]);
    expect(await statusOf(b)).toBe('pending');
  });

  it('a pass when no job is queued reads one probe and never waits for the admission lock', async () => {
    await database.db.execute(sql`update agent_task_state set status = 'cancelled' where status = 'queued'`);
    const path = tenantsFile(`defaults: {max_running_jobs: 1}\n`);
    const started: string[] = [];
    const admission = supervisor(database, path, started);
    const holder = await second.pool.connect();
    try {
      await holder.query('begin');
      await holder.query(`select pg_advisory_xact_lock(hashtext('switchyard:admission'))`);
      // Another supervisor's pass holds the lock: the probe answers without it.
      expect(await admission.admitIfQueued()).toEqual([]);
      const job = await submitQueued(`q-${randomUUID().slice(0, 8)}`, new Date());
      const pass = admission.admitIfQueued();
      await holder.query('commit');
      expect(await pass).toEqual([job]);
      expect(started).toEqual([job]);
    } finally {
      await holder.query('rollback').catch(() => undefined);
      holder.release();
    }
  });
});
