/**
 * The list reads that must stay cheap at millions of task rows (bench rows-1m): the job lists'
 * keyset pages and the admin task list. Real Postgres with the real migrations: first what they
 * return, then that the statements they send are walks of the migration-0009 indexes (no sort of
 * the whole tenant, no filter over the pages before the cursor, no scan of every running task).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import type { TaskStatus } from '@switchyard/contracts';
import * as schema from '../schema';
import type { NewTaskRow } from '../schema';
import { createTestDatabase, type TestDatabase } from '../testing/test-database';
import { AdminJobRepository } from './admin-job.repository';
import type { JobListCursor } from './job-list';
import { TaskRecoveryRepository } from './task-recovery.repository';
import { TaskRepository, type TaskView } from './task.repository';

let database: TestDatabase;
/** The statements the repositories below sent, with their parameters. */
const sent: { sql: string; params: unknown[] }[] = [];
let tasks: TaskRepository;
let admin: AdminJobRepository;
let recovery: TaskRecoveryRepository;

beforeAll(async () => {
  database = await createTestDatabase();
  const logged = drizzle(database.pool, { schema, logger: { logQuery: (query, params) => void sent.push({ sql: query, params }) } });
  tasks = new TaskRepository(logged, database.pool);
  admin = new AdminJobRepository(logged);
  recovery = new TaskRecoveryRepository(logged);
});

afterAll(async () => {
  await database?.destroy();
});

const newTenant = () => `tenant-${randomUUID().slice(0, 8)}`;

/** Jobs of one task each, created `createdAt` (several may share a millisecond), with the given status. */
async function insertJobs(tenantId: string, jobs: { createdAt: Date; status: TaskStatus }[]): Promise<string[]> {
  const ids: string[] = [];
  for (const { createdAt, status } of jobs) {
    const jobId = randomUUID();
    const base = { jobId, tenantId, jobType: 'doc_review', status, createdAt, updatedAt: createdAt };
    const root: NewTaskRow = { ...base, taskId: jobId, parentTaskId: null, agentId: 'supervisor', role: 'job', inputSummary: {}, totalSteps: 1 };
    await tasks.createJob(root, [{ ...base, taskId: randomUUID(), parentTaskId: jobId, agentId: 'extract-1', role: 'extract', inputSummary: {}, totalSteps: 2 }]);
    ids.push(jobId);
  }
  return ids;
}

/** Every page of a list, following each page's last row as the cursor. */
async function allPages(page: (cursor?: JobListCursor) => Promise<TaskView[]>, pageSize: number): Promise<string[]> {
  const seen: string[] = [];
  let cursor: JobListCursor | undefined;
  for (;;) {
    const rows = await page(cursor);
    seen.push(...rows.map((r) => r.taskId));
    const last = rows.at(-1);
    if (rows.length < pageSize || !last) return seen;
    cursor = { createdAt: last.createdAt, taskId: last.taskId };
  }
}

/** Newest first, ties by task id descending: the order every job list promises. */
const newestFirst = (jobs: { id: string; createdAt: Date }[]) =>
  [...jobs].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).map((j) => j.id);

describe('job lists: keyset pages', () => {
  const base = Date.UTC(2031, 0, 1);
  const at = (ms: number) => new Date(base + ms);
  // Three jobs in one millisecond, so pages must break ties by id; statuses mixed.
  const plan = [0, 1, 1, 1, 2, 3, 5, 8, 8, 13].map((ms, i) => ({ createdAt: at(ms), status: (i % 3 === 0 ? 'failed' : 'success') as TaskStatus }));

  it("pages through a tenant's jobs, all and by status, each exactly once in list order", async () => {
    const tenant = newTenant();
    const ids = await insertJobs(tenant, plan);
    const jobs = ids.map((id, i) => ({ id, ...plan[i]! }));
    expect(await allPages((cursor) => tasks.listJobs(tenant, { limit: 3, ...(cursor ? { cursor } : {}) }), 3)).toEqual(newestFirst(jobs));
    expect(await allPages((cursor) => tasks.listJobs(tenant, { status: 'failed', limit: 2, ...(cursor ? { cursor } : {}) }), 2)).toEqual(
      newestFirst(jobs.filter((j) => j.status === 'failed')),
    );
  });

  it("pages through every tenant's jobs for the admin list, all, by status and by tenant", async () => {
    const [a, b] = [newTenant(), newTenant()];
    // Far in the future, so no other test's jobs come first.
    const future = plan.map((p) => ({ ...p, createdAt: new Date(p.createdAt.getTime() + 10 * 365 * 86_400_000) }));
    const idsA = await insertJobs(a, future.slice(0, 5));
    const idsB = await insertJobs(b, future.slice(5));
    const jobs = [...idsA, ...idsB].map((id, i) => ({ id, ...future[i]! }));
    const firstPages = (await allPages((cursor) => admin.listJobs({ limit: 4, ...(cursor ? { cursor } : {}) }), 4)).slice(0, jobs.length);
    expect(firstPages).toEqual(newestFirst(jobs));
    const failed = await allPages((cursor) => admin.listJobs({ status: 'failed', limit: 2, ...(cursor ? { cursor } : {}) }), 2);
    expect(failed.slice(0, 4)).toEqual(newestFirst(jobs.filter((j) => j.status === 'failed')));
    expect(await allPages((cursor) => admin.listJobs({ tenantId: b, status: 'success', limit: 2, ...(cursor ? { cursor } : {}) }), 2)).toEqual(
      newestFirst(jobs.filter((j) => idsB.includes(j.id) && j.status === 'success')),
    );
  });
});

describe('admin task list', () => {
  it('without a filter, shows unfinished tasks that are stale or resumed, once each, newest heartbeat first', async () => {
    const tenant = newTenant();
    const [jobId] = await insertJobs(tenant, [{ createdAt: new Date(), status: 'running' }]);
    const minutesAgo = (m: number) => sql`now() - make_interval(mins => ${m})`;
    const task = async (status: TaskStatus, retryCount: number, updatedMinutesAgo: number) => {
      const taskId = randomUUID();
      await database.pool.query(
        `insert into agent_task_state (task_id, parent_task_id, job_id, tenant_id, job_type, agent_id, role, status, retry_count, input_summary, total_steps)
         values ($1, $2, $2, $3, 'doc_review', 'extract', 'extract', $4, $5, '{}', 2)`,
        [taskId, jobId, tenant, status, retryCount],
      );
      await database.db.execute(sql`update agent_task_state set updated_at = ${minutesAgo(updatedMinutesAgo)} where task_id = ${taskId}`);
      return taskId;
    };
    // Far in the past, behind every other test's tasks in the newest-first list.
    const staleResumed = await task('running', 1, 600_000);
    const stale = await task('running', 0, 600_001);
    const resumedPending = await task('pending', 2, 600_002);
    await task('running', 0, 0); // alive
    await task('success', 1, 600_003); // resumed, but finished
    const resumedPaused = await task('paused', 1, 600_004);

    const listed = (await recovery.listForAdmin({ staleAfterMs: 60_000, limit: 500 })).filter((t) => t.tenantId === tenant);
    expect(listed.map((t) => [t.taskId, t.stale])).toEqual([
      [staleResumed, true],
      [stale, true],
      [resumedPending, false],
      [resumedPaused, false],
    ]);
    const limited = await recovery.listForAdmin({ staleAfterMs: 60_000, limit: 2 });
    expect(limited).toHaveLength(2);
  });

  it('by status and by resumption, newest heartbeat first', async () => {
    const tenant = newTenant();
    const [jobId] = await insertJobs(tenant, [{ createdAt: new Date(), status: 'failed' }]);
    const ids: string[] = [];
    for (const [retryCount, minutes] of [[0, 3], [1, 1], [1, 2]] as const) {
      const taskId = randomUUID();
      ids.push(taskId);
      await database.pool.query(
        `insert into agent_task_state (task_id, parent_task_id, job_id, tenant_id, job_type, agent_id, role, status, retry_count, input_summary, total_steps, updated_at)
         values ($1, $2, $2, $3, 'doc_review', 'extract', 'extract', 'failed', $4, '{}', 2, now() + make_interval(days => 3650, mins => -$5::int))`,
        [taskId, jobId, tenant, retryCount, minutes],
      );
    }
    const mine = (rows: { taskId: string }[]) => rows.map((r) => r.taskId).filter((id) => ids.includes(id));
    expect(mine(await recovery.listForAdmin({ status: 'failed', staleAfterMs: 60_000, limit: 500 }))).toEqual([ids[1], ids[2], ids[0]]);
    expect(mine(await recovery.listForAdmin({ resumed: true, staleAfterMs: 60_000, limit: 500 }))).toEqual([ids[1], ids[2]]);
  });
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/**
 * The plan of the last statement a repository call sent. The test tables are small, where a
 * sequential scan, a bitmap and a sort are always cheapest: with them off, the planner shows
 * the index walk in list order that the statement can use at any size (a sort stays in the
 * plan when there is none).
 */
async function planOf(call: () => Promise<unknown>): Promise<PlanNode[]> {
  sent.length = 0;
  await call();
  const statement = sent.at(-1)!;
  const client = await database.pool.connect();
  try {
    await client.query('begin');
    for (const method of ['seqscan', 'bitmapscan', 'sort']) await client.query(`set local enable_${method} = off`);
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`explain (format json) ${statement.sql}`, statement.params);
    await client.query('rollback');
    return nodesOf(rows[0]!['QUERY PLAN'][0].Plan);
  } finally {
    client.release();
  }
}

const indexWalks = (nodes: PlanNode[]) => nodes.filter((n) => /^Index( Only)? Scan$/.test(n['Node Type'])).map((n) => n['Index Name']);

describe('list statements walk their indexes', () => {
  const cursor = { createdAt: new Date(Date.UTC(2031, 0, 1)), taskId: randomUUID() };

  beforeAll(async () => {
    await database.pool.query('analyze agent_task_state');
  });

  it('starts a page at the cursor inside the index, for the tenant and the admin lists', async () => {
    for (const call of [() => tasks.listJobs('tenant-x', { limit: 20, cursor }), () => admin.listJobs({ limit: 20, cursor })]) {
      const nodes = await planOf(call);
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Sort');
      expect(nodes.some((n) => /ROW\(created_at, task_id\) < ROW/.test(n['Index Cond'] ?? ''))).toBe(true);
    }
  });

  it('reads one status of the job lists from its own index, in list order', async () => {
    const cases: [() => Promise<unknown>, string][] = [
      [() => tasks.listJobs('tenant-x', { status: 'failed', limit: 20 }), 'agent_task_state_tenant_status_jobs_idx'],
      [() => admin.listJobs({ status: 'queued', limit: 20 }), 'agent_task_state_status_jobs_idx'],
      [() => admin.listJobs({ limit: 20 }), 'agent_task_state_jobs_idx'],
    ];
    for (const [call, index] of cases) {
      const nodes = await planOf(call);
      expect(indexWalks(nodes)).toEqual([index]);
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Sort');
    }
  });

  it('reads the admin task list from the partial indexes of stale, resumed and per-status tasks', async () => {
    const walks = async (call: () => Promise<unknown>) => indexWalks(await planOf(call));
    expect((await walks(() => recovery.listForAdmin({ staleAfterMs: 8_000, limit: 100 }))).sort()).toEqual([
      'agent_task_state_resumed_unfinished_idx',
      'agent_task_state_running_heartbeat_idx',
    ]);
    expect(await walks(() => recovery.listForAdmin({ stale: true, staleAfterMs: 8_000, limit: 100 }))).toEqual(['agent_task_state_running_heartbeat_idx']);
    expect(await walks(() => recovery.listForAdmin({ resumed: true, staleAfterMs: 8_000, limit: 100 }))).toEqual(['agent_task_state_resumed_idx']);
    expect(await walks(() => recovery.listForAdmin({ status: 'success', staleAfterMs: 8_000, limit: 100 }))).toEqual(['agent_task_state_status_updated_idx']);
  });
});
