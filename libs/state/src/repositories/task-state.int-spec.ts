import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { RouteRecord } from '@switchyard/contracts';
import { agentTaskState, type NewTaskRow, type StepCheckpoint } from '../schema';
import { createTestDatabase, type TestDatabase } from '../testing/test-database';
import { JobRepository } from './job.repository';
import { LeaseLostError, type Lease, type TaskOutcomeRow } from './task-clauses';
import { TaskLeaseRepository } from './task-lease.repository';

let database: TestDatabase;
let jobs: JobRepository;
let repo: TaskLeaseRepository;

beforeAll(async () => {
  database = await createTestDatabase();
  jobs = new JobRepository(database.db);
  repo = new TaskLeaseRepository(database.db);
});

afterAll(async () => {
  await database?.destroy();
});

/** Every test works in its own tenant, so no test sees another's rows. */
const newTenant = () => `tenant-${randomUUID().slice(0, 8)}`;

interface JobSpec {
  tenantId: string;
  extracts?: number;
  optional?: boolean[];
  idempotencyKey?: string;
  createdAt?: Date;
}

interface BuiltJob {
  jobId: string;
  root: NewTaskRow;
  tasks: NewTaskRow[];
  extractIds: string[];
  synthesizeId: string;
}

function buildJob(spec: JobSpec): BuiltJob {
  const jobId = randomUUID();
  const count = spec.extracts ?? 2;
  const base = { jobId, tenantId: spec.tenantId, jobType: 'doc_review', ...(spec.createdAt ? { createdAt: spec.createdAt } : {}) };
  const root: NewTaskRow = {
    ...base,
    taskId: jobId,
    parentTaskId: null,
    agentId: 'supervisor',
    role: 'job',
    inputSummary: { question: 'q', document_count: count },
    totalSteps: count + 1,
    ...(spec.idempotencyKey ? { idempotencyKey: spec.idempotencyKey, requestHash: `hash-of-${spec.idempotencyKey}` } : {}),
  };
  const extracts: NewTaskRow[] = Array.from({ length: count }, (_, i) => ({
    ...base,
    taskId: randomUUID(),
    parentTaskId: jobId,
    agentId: `extract-${i + 1}`,
    role: 'extract',
    optional: spec.optional?.[i] ?? false,
    inputSummary: { item: { id: `doc-${i + 1}`, text: `text ${i + 1}` }, item_index: i, item_key: `doc-${i + 1}` },
    totalSteps: 2,
  }));
  const synthesize: NewTaskRow = {
    ...base,
    taskId: randomUUID(),
    parentTaskId: jobId,
    agentId: 'synthesize',
    role: 'synthesize',
    dependsOn: extracts.map((t) => t.taskId),
    inputSummary: { question: 'q' },
    totalSteps: 2,
  };
  return { jobId, root, tasks: [...extracts, synthesize], extractIds: extracts.map((t) => t.taskId), synthesizeId: synthesize.taskId };
}

/** A repository of its own (its own group commits) whose statement names are recorded. */
function spiedRepository(): { repository: TaskLeaseRepository; statements: () => string[] } {
  const names: string[] = [];
  const pool = database.pool;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  const spy = Object.create(pool) as typeof pool;
  spy.query = ((...args: unknown[]) => {
    const first = args[0] as { name?: string };
    if (first && typeof first === 'object' && first.name) names.push(first.name);
    return query(...args);
  }) as typeof pool.query;
  return { repository: new TaskLeaseRepository(database.db, spy), statements: () => names };
}

async function createJob(spec: JobSpec): Promise<BuiltJob> {
  const job = buildJob(spec);
  const result = await jobs.createJob(job.root, job.tasks);
  expect(result).toEqual({ created: true, jobId: job.jobId });
  return job;
}

async function claim(taskId: string, owner = 'worker-a'): Promise<Lease> {
  const result = await repo.claimTask(taskId, owner);
  if (!result.claimed) throw new Error(`could not claim ${taskId}: ${result.reason}`);
  return result.lease;
}

async function row(taskId: string) {
  const found = await repo.findTask(taskId);
  if (!found) throw new Error(`no task ${taskId}`);
  return found;
}

async function countRows(where: ReturnType<typeof eq>): Promise<number> {
  const [result] = await database.db.select({ n: sql<number>`count(*)::int` }).from(agentTaskState).where(where);
  return result?.n ?? 0;
}

const checkpointOf = (step: number, name = `step-${step}`, summary: unknown = { step }): StepCheckpoint => ({
  step,
  name,
  summary,
  completed_at: '2030-01-01T00:00:00.000Z',
});

const route = (step: number, target = 'local_7b', outcome: RouteRecord['outcome'] = 'ok'): RouteRecord => ({
  step,
  target,
  model: `${target}-model`,
  rule: 'fallback',
  outcome,
  latency_ms: 5,
});

describe('JobRepository and TaskLeaseRepository (Postgres)', () => {
  describe('createJob', () => {
    it('writes the root and every task, all pending', async () => {
      const tenantId = newTenant();
      const job = await createJob({ tenantId, extracts: 3 });

      const tree = await jobs.findJobTree(tenantId, job.jobId);
      expect(tree).toHaveLength(5);
      expect(tree[0]).toMatchObject({ taskId: job.jobId, parentTaskId: null, jobId: job.jobId, role: 'job', status: 'pending' });
      expect(tree.slice(1).map((t) => t.taskId).sort()).toEqual([...job.extractIds, job.synthesizeId].sort());
      for (const task of tree.slice(1)) {
        expect(task).toMatchObject({
          parentTaskId: job.jobId,
          jobId: job.jobId,
          tenantId,
          status: 'pending',
          currentStep: 0,
          retryCount: 0,
          routeTargets: [],
          costUsd: 0,
          outputSummary: null,
          error: null,
        });
      }
      // The view columns leave the input (the documents) out.
      expect(tree[1]).not.toHaveProperty('inputSummary');
      const full = await row(job.extractIds[0]!);
      expect(full.inputSummary).toEqual({ item: { id: 'doc-1', text: 'text 1' }, item_index: 0, item_key: 'doc-1' });
      expect(full).toMatchObject({ leaseOwner: null, leaseVersion: 0, stepCheckpoints: [] });
    });

    it('leaves nothing behind when a task insert fails', async () => {
      const tenantId = newTenant();
      const job = buildJob({ tenantId, extracts: 2, idempotencyKey: 'k-rollback' });
      const broken = [...job.tasks, { ...job.tasks[0]!, agentId: 'extract-dup' }]; // duplicate primary key

      await expect(jobs.createJob(job.root, broken)).rejects.toThrow();
      expect(await repo.findTask(job.jobId)).toBeUndefined();
      expect(await countRows(eq(agentTaskState.tenantId, tenantId))).toBe(0);

      // The idempotency key was not consumed: the same submission can be made again.
      expect(await jobs.createJob(job.root, job.tasks)).toEqual({ created: true, jobId: job.jobId });
      expect(await countRows(eq(agentTaskState.jobId, job.jobId))).toBe(4);
    });

    it('leaves nothing behind when a task points at a missing parent', async () => {
      const tenantId = newTenant();
      const job = buildJob({ tenantId });
      const orphan = { ...job.tasks[0]!, taskId: randomUUID(), parentTaskId: randomUUID() };
      await expect(jobs.createJob(job.root, [...job.tasks, orphan])).rejects.toThrow();
      expect(await countRows(eq(agentTaskState.tenantId, tenantId))).toBe(0);
    });

    it('returns the existing job for a repeated idempotency key and writes nothing', async () => {
      const tenantId = newTenant();
      const first = await createJob({ tenantId, idempotencyKey: 'same-key' });
      const second = buildJob({ tenantId, idempotencyKey: 'same-key', extracts: 4 });

      const result = await jobs.createJob(second.root, second.tasks);
      expect(result.created).toBe(false);
      if (result.created) return;
      expect(result.existing).toMatchObject({
        taskId: first.jobId,
        tenantId,
        idempotencyKey: 'same-key',
        requestHash: 'hash-of-same-key',
        status: 'pending',
      });
      expect(await countRows(eq(agentTaskState.tenantId, tenantId))).toBe(4);
      expect(await repo.findTask(second.jobId)).toBeUndefined();
      expect(await repo.findTask(second.tasks[0]!.taskId)).toBeUndefined();
    });

    it('settles two concurrent submissions with one key on one job', async () => {
      const tenantId = newTenant();
      const a = buildJob({ tenantId, idempotencyKey: 'race' });
      const b = buildJob({ tenantId, idempotencyKey: 'race' });
      const results = await Promise.all([jobs.createJob(a.root, a.tasks), jobs.createJob(b.root, b.tasks)]);

      const created = results.filter((r) => r.created);
      const found = results.flatMap((r) => (r.created ? [] : [r.existing.taskId]));
      expect(created).toHaveLength(1);
      expect(found).toEqual([created[0]!.created ? created[0]!.jobId : '']);
      expect(await countRows(eq(agentTaskState.tenantId, tenantId))).toBe(4);
    });

    it('treats the same key under another tenant as a new job', async () => {
      const first = await createJob({ tenantId: newTenant(), idempotencyKey: 'shared-key' });
      const otherTenant = newTenant();
      const second = await createJob({ tenantId: otherTenant, idempotencyKey: 'shared-key' });
      expect(second.jobId).not.toBe(first.jobId);
      expect(await countRows(eq(agentTaskState.tenantId, otherTenant))).toBe(4);
    });

    it('never treats jobs without a key as duplicates', async () => {
      const tenantId = newTenant();
      await createJob({ tenantId });
      await createJob({ tenantId });
      expect(await jobs.listJobs(tenantId, { limit: 10 })).toHaveLength(2);
    });
  });

  describe('deleteJob', () => {
    it('removes the job and, by cascade, its tasks; only within the tenant', async () => {
      const tenantId = newTenant();
      const job = await createJob({ tenantId });
      await jobs.deleteJob(newTenant(), job.jobId);
      expect(await countRows(eq(agentTaskState.jobId, job.jobId))).toBe(4);
      await jobs.deleteJob(tenantId, job.jobId);
      expect(await countRows(eq(agentTaskState.jobId, job.jobId))).toBe(0);
    });
  });

  describe('reads', () => {
    it('scopes findJobTree and listJobs to the tenant', async () => {
      const tenantId = newTenant();
      const job = await createJob({ tenantId });
      const stranger = newTenant();
      await createJob({ tenantId: stranger });

      expect(await jobs.findJobTree(stranger, job.jobId)).toEqual([]);
      const theirs = await jobs.listJobs(stranger, { limit: 50 });
      expect(theirs.map((j) => j.taskId)).not.toContain(job.jobId);
      expect(theirs).toHaveLength(1);
      expect(await jobs.listJobs(newTenant(), { limit: 50 })).toEqual([]);
    });

    it('lists only root rows', async () => {
      const tenantId = newTenant();
      const job = await createJob({ tenantId, extracts: 3 });
      const listed = await jobs.listJobs(tenantId, { limit: 50 });
      expect(listed.map((j) => j.taskId)).toEqual([job.jobId]);
      expect(listed[0]!.parentTaskId).toBeNull();
    });

    it('pages through every job exactly once, newest first, with a keyset cursor', async () => {
      const tenantId = newTenant();
      const base = Date.parse('2030-01-01T00:00:00.000Z');
      // Two pairs share a timestamp so that the task id has to break the tie.
      const offsets = [0, 1_000, 1_000, 2_000, 3_000, 3_000, 4_000];
      const created: { id: string; createdAt: Date }[] = [];
      for (const offset of offsets) {
        const createdAt = new Date(base + offset);
        const job = await createJob({ tenantId, createdAt, extracts: 1 });
        created.push({ id: job.jobId, createdAt });
      }
      const expected = [...created]
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
        .map((j) => j.id);

      const seen: string[] = [];
      const pageSizes: number[] = [];
      let cursor: { createdAt: Date; taskId: string } | undefined;
      for (let page = 0; page < 10; page += 1) {
        const rows = await jobs.listJobs(tenantId, { limit: 3, ...(cursor ? { cursor } : {}) });
        pageSizes.push(rows.length);
        seen.push(...rows.map((r) => r.taskId));
        if (rows.length < 3) break;
        const last = rows.at(-1)!;
        cursor = { createdAt: last.createdAt, taskId: last.taskId };
      }
      expect(pageSizes).toEqual([3, 3, 1]);
      expect(seen).toEqual(expected);
    });

    // The cursor is a JS Date (milliseconds): created_at is stored at millisecond precision so
    // that jobs a few microseconds apart within one millisecond never fall between pages.
    it('pages through jobs created within one millisecond without losing any', async () => {
      const tenantId = newTenant();
      const stamps = ['2030-01-01 00:00:00.123900+00', '2030-01-01 00:00:00.123456+00', '2030-01-01 00:00:00.123100+00'];
      const ids: string[] = [];
      for (const stamp of stamps) {
        const job = await createJob({ tenantId, extracts: 1 });
        await database.db.update(agentTaskState).set({ createdAt: sql`${stamp}::timestamptz` }).where(eq(agentTaskState.taskId, job.jobId));
        ids.push(job.jobId);
      }
      const first = await jobs.listJobs(tenantId, { limit: 2 });
      expect(first).toHaveLength(2);
      // Stored at millisecond precision, two of the stamps tie: the task id orders them.
      expect(first[0]!.taskId).toBe(ids[0]);
      const last = first.at(-1)!;
      const second = await jobs.listJobs(tenantId, { limit: 2, cursor: { createdAt: last.createdAt, taskId: last.taskId } });
      expect(second).toHaveLength(1);
      expect([...first, ...second].map((r) => r.taskId).sort()).toEqual([...ids].sort());
    });

    it('filters the list by status', async () => {
      const tenantId = newTenant();
      const cancelled = await createJob({ tenantId });
      const running = await createJob({ tenantId });
      const pending = await createJob({ tenantId });
      await jobs.cancelJob(tenantId, cancelled.jobId);
      await claim(running.extractIds[0]!);

      const ids = async (status: 'pending' | 'running' | 'cancelled' | 'success') =>
        (await jobs.listJobs(tenantId, { status, limit: 10 })).map((j) => j.taskId);
      expect(await ids('cancelled')).toEqual([cancelled.jobId]);
      expect(await ids('running')).toEqual([running.jobId]);
      expect(await ids('pending')).toEqual([pending.jobId]);
      expect(await ids('success')).toEqual([]);
    });

    it('reads the outcomes of the tasks of some roles, with their item keys, in plan order', async () => {
      const tenantId = newTenant();
      const job = await createJob({ tenantId, extracts: 2 });
      const output = { conclusion: 'c', evidence: [], confidence: 1 };
      await repo.completeTask(await claim(job.extractIds[1]!), checkpointOf(0), output, [], 0);
      const rows = await repo.findTaskOutcomes(job.jobId, ['extract']);
      expect(rows).toEqual([
        { taskId: job.extractIds[0], role: 'extract', status: 'pending', output: null, key: 'doc-1' },
        { taskId: job.extractIds[1], role: 'extract', status: 'success', output, key: 'doc-2' },
      ]);
      expect(await repo.findTaskOutcomes(job.jobId, [])).toEqual([]);
    });
  });

  describe('summarizeJobs', () => {
    it('counts tasks, completed tasks and cost per job, without the root', async () => {
      const tenantId = newTenant();
      const a = await createJob({ tenantId, extracts: 3 });
      const b = await createJob({ tenantId, extracts: 1 });

      const lease1 = await claim(a.extractIds[0]!);
      await repo.completeTask(lease1, checkpointOf(0), { conclusion: 'x', evidence: [], confidence: 1 }, [], 0.25);
      const lease2 = await claim(a.extractIds[1]!);
      await repo.checkpoint(lease2, checkpointOf(0), [], 0.5);

      const other = await createJob({ tenantId: newTenant(), extracts: 1 });

      const summary = await jobs.summarizeJobs(tenantId, [a.jobId, b.jobId, other.jobId, randomUUID()]);
      expect(summary.size).toBe(2);
      expect(summary.get(a.jobId)).toEqual({ total: 4, completed: 1, costUsd: 0.75 });
      expect(summary.get(b.jobId)).toEqual({ total: 2, completed: 0, costUsd: 0 });
      // Another tenant's job is not summarised for this one.
      expect(summary.has(other.jobId)).toBe(false);
    });

    it('answers an empty list without a query', async () => {
      expect((await jobs.summarizeJobs(newTenant(), [])).size).toBe(0);
    });
  });

  describe('claimTask', () => {
    it('takes a pending task with lease version 1 and marks the job running', async () => {
      const tenantId = newTenant();
      const job = await createJob({ tenantId });
      const taskId = job.extractIds[0]!;

      const result = await repo.claimTask(taskId, 'worker-a');
      expect(result.claimed).toBe(true);
      if (!result.claimed) return;
      expect(result.lease).toEqual({ taskId, owner: 'worker-a', version: 1, jobId: job.jobId });
      expect(result.task).toMatchObject({
        taskId,
        jobId: job.jobId,
        status: 'running',
        leaseOwner: 'worker-a',
        leaseVersion: 1,
        currentStep: 0,
        totalSteps: 2,
        retryCount: 0,
        costUsd: 0,
        stepCheckpoints: [],
        routeTargets: [],
        inputSummary: { item: { id: 'doc-1', text: 'text 1' }, item_index: 0, item_key: 'doc-1' },
        optional: false,
        error: null,
      });
      expect(result.task.startedAt).toBeInstanceOf(Date);
      expect(result.task.createdAt).toBeInstanceOf(Date);

      expect(await row(job.jobId)).toMatchObject({ status: 'running' });
      expect((await row(job.jobId)).startedAt).toBeInstanceOf(Date);
      // Sibling tasks are untouched.
      expect(await row(job.extractIds[1]!)).toMatchObject({ status: 'pending', leaseVersion: 0 });
    });

    it('refuses a second claim of a running task', async () => {
      const job = await createJob({ tenantId: newTenant() });
      await claim(job.extractIds[0]!, 'worker-a');
      expect(await repo.claimTask(job.extractIds[0]!, 'worker-b')).toEqual({ claimed: false, reason: 'already_running', status: 'running' });
      expect(await row(job.extractIds[0]!)).toMatchObject({ leaseOwner: 'worker-a', leaseVersion: 1 });
    });

    it('lets exactly one of two concurrent claims win', async () => {
      const job = await createJob({ tenantId: newTenant() });
      const taskId = job.extractIds[0]!;
      const results = await Promise.all([repo.claimTask(taskId, 'w1'), repo.claimTask(taskId, 'w2')]);
      expect(results.filter((r) => r.claimed)).toHaveLength(1);
      expect(results.filter((r) => !r.claimed)).toEqual([{ claimed: false, reason: 'already_running', status: 'running' }]);
      expect((await row(taskId)).leaseVersion).toBe(1);
    });

    it('reports a finished task with its status', async () => {
      const job = await createJob({ tenantId: newTenant() });
      const lease = await claim(job.extractIds[0]!);
      await repo.completeTask(lease, checkpointOf(0), { conclusion: 'c', evidence: [], confidence: 0.5 }, [], 0);
      expect(await repo.claimTask(job.extractIds[0]!, 'worker-b')).toEqual({ claimed: false, reason: 'finished', status: 'success' });

      const cancelled = await createJob({ tenantId: newTenant() });
      await jobs.cancelJob(cancelled.root.tenantId, cancelled.jobId);
      expect(await repo.claimTask(cancelled.extractIds[0]!, 'worker-b')).toEqual({ claimed: false, reason: 'finished', status: 'cancelled' });
    });

    it('group-commits concurrent claims: each task claimed once, a task asked twice at once claimed once, the others told why', async () => {
      const job = await createJob({ tenantId: newTenant(), extracts: 6 });
      const { repository, statements } = spiedRepository();
      const asks = [...job.extractIds, job.extractIds[2]!, job.synthesizeId, randomUUID()];
      const results = await Promise.all(asks.map((id) => repository.claimTask(id, 'worker-b')));
      expect(statements()).toContain('sy-claim-tasks');
      const claimedIds = results.flatMap((r) => (r.claimed ? [r.task.taskId] : []));
      expect(claimedIds.sort()).toEqual([...job.extractIds].sort());
      for (const r of results) if (r.claimed) expect(r).toMatchObject({ lease: { taskId: r.task.taskId, owner: 'worker-b', version: 1 }, task: { status: 'running' } });
      expect(results.slice(6)).toEqual([
        { claimed: false, reason: 'already_running', status: 'running' },
        { claimed: false, reason: 'blocked', status: 'pending' },
        { claimed: false, reason: 'missing' },
      ]);
      expect((await row(job.jobId)).status).toBe('running');
      for (const id of job.extractIds) expect(await row(id)).toMatchObject({ status: 'running', leaseOwner: 'worker-b', leaseVersion: 1 });
    });

    it('reports a missing task', async () => {
      expect(await repo.claimTask(randomUUID(), 'worker-a')).toEqual({ claimed: false, reason: 'missing' });
    });
  });

  describe('checkpoint', () => {
    it('advances the step and appends the checkpoint, routes and cost', async () => {
      const job = await createJob({ tenantId: newTenant() });
      const lease = await claim(job.extractIds[0]!);

      await repo.checkpoint(lease, checkpointOf(0, 'prepare', { passages: ['p'] }), [route(0)], 0.125);
      let current = await row(lease.taskId);
      expect(current).toMatchObject({ currentStep: 1, costUsd: 0.125, status: 'running' });
      expect(current.stepCheckpoints).toEqual([checkpointOf(0, 'prepare', { passages: ['p'] })]);
      expect(current.routeTargets).toEqual([route(0)]);

      await repo.checkpoint(lease, checkpointOf(1, 'extract'), [route(1, 'a', 'bad_output'), route(1, 'b')], 0.25);
      current = await row(lease.taskId);
      expect(current.currentStep).toBe(2);
      expect(current.costUsd).toBe(0.375);
      expect(current.stepCheckpoints.map((c) => c.name)).toEqual(['prepare', 'extract']);
      expect(current.routeTargets).toEqual([route(0), route(1, 'a', 'bad_output'), route(1, 'b')]);
    });

    it.each([
      ['an older lease version', (l: Lease) => ({ ...l, version: l.version - 1 })],
      ['a newer lease version', (l: Lease) => ({ ...l, version: l.version + 1 })],
      ['another owner', (l: Lease) => ({ ...l, owner: 'worker-z' })],
    ])('refuses %s and changes nothing', async (_label, mutate) => {
      const job = await createJob({ tenantId: newTenant() });
      const lease = await claim(job.extractIds[0]!);
      const before = await row(lease.taskId);

      await expect(repo.checkpoint(mutate(lease), checkpointOf(0), [route(0)], 1)).rejects.toBeInstanceOf(LeaseLostError);
      expect(await row(lease.taskId)).toEqual(before);
    });

    it('refuses a step that is not the next one and changes nothing', async () => {
      const job = await createJob({ tenantId: newTenant() });
      const lease = await claim(job.extractIds[0]!);
      await repo.checkpoint(lease, checkpointOf(0), [], 0);
      const before = await row(lease.taskId);

      await expect(repo.checkpoint(lease, checkpointOf(0), [route(0)], 1)).rejects.toBeInstanceOf(LeaseLostError); // replayed step
      await expect(repo.checkpoint(lease, checkpointOf(2), [route(2)], 1)).rejects.toBeInstanceOf(LeaseLostError); // skipped step
      expect(await row(lease.taskId)).toEqual(before);
    });

    it('refuses the previous holder after another worker took the task over', async () => {
      const job = await createJob({ tenantId: newTenant() });
      const stale = await claim(job.extractIds[0]!, 'worker-a');
      await repo.checkpoint(stale, checkpointOf(0), [], 0);
      await repo.releaseTask(stale, 'presumed dead', []);
      const fresh = await claim(job.extractIds[0]!, 'worker-b');
      expect(fresh.version).toBe(2);

      const before = await row(fresh.taskId);
      const error = await repo.checkpoint(stale, checkpointOf(1), [], 1).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LeaseLostError);
      expect((error as LeaseLostError).lease).toEqual(stale);
      expect((error as Error).message).toContain(stale.taskId);
      expect(await row(fresh.taskId)).toEqual(before);
    });
  });

  describe('checkpointReadingJobInput and findJobInput', () => {
    const input = { question: 'q', documents: [{ id: 'd1', text: 'long' }], nested: { items: [1, 2], keep: true }, 'odd "key"': ['x'] };

    async function jobWithInput() {
      const job = buildJob({ tenantId: newTenant() });
      expect(await jobs.createJob({ ...job.root, inputSummary: { input } }, job.tasks)).toEqual({ created: true, jobId: job.jobId });
      return job;
    }

    it("checkpoints the step and returns the job's input without the arrays at the given paths, in one statement", async () => {
      const job = await jobWithInput();
      const lease = await claim(job.extractIds[0]!);

      const read = await repo.checkpointReadingJobInput(lease, checkpointOf(0, 'prepare'), [['documents'], ['nested', 'items'], ['odd "key"']]);
      expect(read).toEqual({ question: 'q', nested: { keep: true } });
      expect(await row(lease.taskId)).toMatchObject({ currentStep: 1, stepCheckpoints: [checkpointOf(0, 'prepare')] });
      expect(await repo.checkpointReadingJobInput(lease, checkpointOf(1), [])).toEqual(input);
      expect(await repo.findJobInput(job.jobId, [['documents']])).toEqual({ question: 'q', nested: input.nested, 'odd "key"': ['x'] });
      expect(await repo.findJobInput(job.jobId)).toEqual(input);
    });

    it('group-commits concurrent checkpoints: each under its own fence, with its own paths left out', async () => {
      const job = await jobWithInput();
      const { repository, statements } = spiedRepository();
      const leases = await Promise.all(job.extractIds.map((id, i) => claim(id, `w${i}`)));
      const second = buildJob({ tenantId: newTenant(), extracts: 4 });
      expect(await jobs.createJob({ ...second.root, inputSummary: { input } }, second.tasks)).toEqual({ created: true, jobId: second.jobId });
      leases.push(...(await Promise.all(second.extractIds.map((id, i) => claim(id, `v${i}`)))));
      const stale = leases[3]!;
      const omits = [[['documents']], [], [['nested', 'items']], [], [['odd "key"'], ['documents']], [['documents']]];
      const results = await Promise.allSettled(
        leases.map((lease, i) => repository.checkpointReadingJobInput(lease === stale ? { ...lease, version: lease.version + 1 } : lease, checkpointOf(0, 'prepare'), omits[i]!)),
      );
      expect(statements()).toContain('sy-checkpoints-reading-input');
      expect(results[3]).toMatchObject({ status: 'rejected', reason: expect.any(LeaseLostError) });
      const read = (i: number) => (results[i] as PromiseFulfilledResult<unknown>).value;
      expect(read(0)).toEqual({ question: 'q', nested: input.nested, 'odd "key"': ['x'] });
      expect(read(1)).toEqual(input);
      expect(read(2)).toEqual({ question: 'q', documents: input.documents, nested: { keep: true }, 'odd "key"': ['x'] });
      expect(read(4)).toEqual({ question: 'q', nested: input.nested });
      expect(read(5)).toEqual({ question: 'q', nested: input.nested, 'odd "key"': ['x'] });
      for (const [i, lease] of leases.entries()) {
        expect(await row(lease.taskId)).toMatchObject(i === 3 ? { currentStep: 0, stepCheckpoints: [] } : { currentStep: 1, stepCheckpoints: [checkpointOf(0, 'prepare')] });
      }
    });

    it('a batch that fails part-way writes each of its checkpoints alone: nothing lost, nothing written twice', async () => {
      const job = await jobWithInput();
      const second = buildJob({ tenantId: newTenant(), extracts: 4 });
      expect(await jobs.createJob({ ...second.root, inputSummary: { input } }, second.tasks)).toEqual({ created: true, jobId: second.jobId });
      const { repository, statements } = spiedRepository();
      const leases = await Promise.all([...job.extractIds, ...second.extractIds].map((id, i) => claim(id, `w${i}`)));
      // Not a uuid: the batch statement fails as a whole, then this one fails alone and the others are written alone.
      const bad: Lease = { taskId: 'not-a-task-id', owner: 'w', version: 1 };
      const all = [...leases.slice(0, 3), bad, ...leases.slice(3)];
      const results = await Promise.allSettled(all.map((lease) => repository.checkpointReadingJobInput(lease, checkpointOf(0, 'prepare'), [['documents']])));
      expect(statements()).toContain('sy-checkpoints-reading-input');
      expect(results.map((r) => r.status)).toEqual(all.map((lease) => (lease === bad ? 'rejected' : 'fulfilled')));
      for (const lease of leases) expect(await row(lease.taskId)).toMatchObject({ currentStep: 1, stepCheckpoints: [checkpointOf(0, 'prepare')] });
    });

    it('refuses a stale lease and changes nothing', async () => {
      const job = await jobWithInput();
      const lease = await claim(job.extractIds[0]!);
      const before = await row(lease.taskId);

      await expect(repo.checkpointReadingJobInput({ ...lease, version: lease.version + 1 }, checkpointOf(0), [])).rejects.toBeInstanceOf(LeaseLostError);
      await expect(repo.checkpointReadingJobInput(lease, checkpointOf(1), [])).rejects.toBeInstanceOf(LeaseLostError); // skipped step
      expect(await row(lease.taskId)).toEqual(before);
    });
  });

  describe('completeTask', () => {
    it('the last unfinished task completes the job together with itself, with the result built from every task', async () => {
      const tenantId = newTenant();
      const job = await createJob({ tenantId, extracts: 1 });
      const extract = await claim(job.extractIds[0]!);
      await repo.completeTask(extract, checkpointOf(0), { conclusion: 'doc', evidence: ['e'], confidence: 0.9 }, [route(0)], 0.1);

      const synth = await claim(job.synthesizeId);
      await repo.checkpoint(synth, checkpointOf(0, 'gather'), [], 0);
      const output = { conclusion: 'all', evidence: ['doc-1'], confidence: 0.7 };
      const jobResult = { synthesis: output, documents: [{ document_id: 'doc-1' }] };
      const finished = await repo.completeTask(synth, checkpointOf(1, 'synthesize'), output, [route(1, 'cloud')], 0.2, () => jobResult);
      expect(finished).toEqual({ ready: [], jobCompleted: true });

      const task = await row(job.synthesizeId);
      expect(task).toMatchObject({ status: 'success', currentStep: 2, outputSummary: output, costUsd: 0.2, error: null });
      expect(task.stepCheckpoints.map((c) => c.name)).toEqual(['gather', 'synthesize']);
      expect(task.routeTargets).toEqual([route(1, 'cloud')]);
      expect(task.finishedAt).toBeInstanceOf(Date);
      const root = await row(job.jobId);
      expect(root).toMatchObject({ status: 'success', outputSummary: jobResult });
      expect(root.finishedAt).toBeInstanceOf(Date);
    });

    it('with tasks still unfinished completes only the task', async () => {
      const job = await createJob({ tenantId: newTenant() });
      const lease = await claim(job.extractIds[0]!);
      const output = { conclusion: 'c', evidence: [], confidence: null };
      const finished = await repo.completeTask(lease, checkpointOf(0), output, [], 0, () => ({ never: 'built' }));
      expect(finished).toEqual({ ready: [], jobCompleted: false });

      expect(await row(lease.taskId)).toMatchObject({ status: 'success', outputSummary: output, currentStep: 1 });
      const root = await row(job.jobId);
      expect(root).toMatchObject({ status: 'running', outputSummary: null, finishedAt: null });
    });

    it('refuses a stale lease and a wrong step, changing nothing', async () => {
      const job = await createJob({ tenantId: newTenant() });
      const lease = await claim(job.extractIds[0]!);
      const before = await row(lease.taskId);
      const rootBefore = await row(job.jobId);
      const output = { conclusion: 'c', evidence: [], confidence: 1 };

      await expect(repo.completeTask({ ...lease, version: 7 }, checkpointOf(0), output, [], 0, () => ({ r: 1 }))).rejects.toBeInstanceOf(LeaseLostError);
      await expect(repo.completeTask({ ...lease, owner: 'x' }, checkpointOf(0), output, [], 0, () => ({ r: 1 }))).rejects.toBeInstanceOf(LeaseLostError);
      await expect(repo.completeTask(lease, checkpointOf(1), output, [], 0, () => ({ r: 1 }))).rejects.toBeInstanceOf(LeaseLostError);
      expect(await row(lease.taskId)).toEqual(before);
      expect(await row(job.jobId)).toEqual(rootBefore);
    });

    it('cannot complete a task twice', async () => {
      const job = await createJob({ tenantId: newTenant() });
      const lease = await claim(job.extractIds[0]!);
      const output = { conclusion: 'c', evidence: [], confidence: 1 };
      await repo.completeTask(lease, checkpointOf(0), output, [], 0);
      await expect(repo.completeTask(lease, checkpointOf(0), output, [], 0)).rejects.toBeInstanceOf(LeaseLostError);
    });
  });

  describe('failTask', () => {
    it('on a required task fails the job, naming the agent, and cancels the unfinished siblings', async () => {
      const tenantId = newTenant();
      const job = await createJob({ tenantId, extracts: 3 });
      const [first, second, third] = job.extractIds as [string, string, string];
      const done = await claim(first);
      await repo.completeTask(done, checkpointOf(0), { conclusion: 'ok', evidence: [], confidence: 1 }, [], 0);
      const runningSibling = await claim(third, 'worker-c');
      const failing = await claim(second, 'worker-b');

      const result = await repo.failTask(failing, 'upstream rejected the request', [route(0, 'local_7b', 'error')]);
      expect(result).toEqual({ jobFailed: true });

      const failed = await row(second);
      expect(failed).toMatchObject({ status: 'failed', error: 'upstream rejected the request' });
      expect(failed.routeTargets).toEqual([route(0, 'local_7b', 'error')]);
      expect(failed.finishedAt).toBeInstanceOf(Date);

      const root = await row(job.jobId);
      expect(root.status).toBe('failed');
      expect(root.error).toBe('task extract-2 failed: upstream rejected the request');

      expect(await row(first)).toMatchObject({ status: 'success' });
      expect(await row(third)).toMatchObject({ status: 'cancelled' });
      expect((await row(third)).error).toContain('another task of the job failed');
      expect(await row(job.synthesizeId)).toMatchObject({ status: 'cancelled' });

      // The cancelled sibling's worker can no longer write.
      await expect(repo.checkpoint(runningSibling, checkpointOf(0), [], 0)).rejects.toBeInstanceOf(LeaseLostError);
    });

    it('on an optional task fails only that task', async () => {
      const tenantId = newTenant();
      const job = await createJob({ tenantId, extracts: 2, optional: [true, false] });
      const lease = await claim(job.extractIds[0]!);

      expect(await repo.failTask(lease, 'bad document', [])).toEqual({ jobFailed: false });
      expect(await row(job.extractIds[0]!)).toMatchObject({ status: 'failed', error: 'bad document' });
      expect(await row(job.jobId)).toMatchObject({ status: 'running', error: null });
      expect(await row(job.extractIds[1]!)).toMatchObject({ status: 'pending' });
      expect(await row(job.synthesizeId)).toMatchObject({ status: 'pending' });
    });

    it('refuses a stale lease and changes nothing', async () => {
      const job = await createJob({ tenantId: newTenant() });
      const lease = await claim(job.extractIds[0]!);
      await expect(repo.failTask({ ...lease, owner: 'other' }, 'x', [])).rejects.toBeInstanceOf(LeaseLostError);
      expect(await row(lease.taskId)).toMatchObject({ status: 'running', error: null });
      expect(await row(job.jobId)).toMatchObject({ status: 'running', error: null });
    });
  });

  describe('releaseTask and heartbeat', () => {
    it('puts the task back to pending with one more retry, keeping its checkpoints', async () => {
      const job = await createJob({ tenantId: newTenant() });
      const lease = await claim(job.extractIds[0]!);
      await repo.checkpoint(lease, checkpointOf(0, 'prepare'), [route(0)], 0.5);

      await repo.releaseTask(lease, 'upstream timeout', [route(1, 'local_7b', 'error')]);
      const released = await row(lease.taskId);
      expect(released).toMatchObject({
        status: 'pending',
        leaseOwner: null,
        leaseVersion: 1,
        retryCount: 1,
        currentStep: 1,
        costUsd: 0.5,
        error: 'upstream timeout',
      });
      expect(released.stepCheckpoints).toEqual([checkpointOf(0, 'prepare')]);
      expect(released.routeTargets).toEqual([route(0), route(1, 'local_7b', 'error')]);

      // The next claim resumes where it stopped, with a new fencing token, and clears the error.
      const again = await repo.claimTask(lease.taskId, 'worker-b');
      expect(again.claimed).toBe(true);
      if (!again.claimed) return;
      expect(again.lease.version).toBe(2);
      expect(again.task).toMatchObject({ currentStep: 1, retryCount: 1, error: null, stepCheckpoints: [checkpointOf(0, 'prepare')] });
    });

    it('refuses to release with a stale lease', async () => {
      const job = await createJob({ tenantId: newTenant() });
      const lease = await claim(job.extractIds[0]!);
      await expect(repo.releaseTask({ ...lease, version: 0 }, 'x', [])).rejects.toBeInstanceOf(LeaseLostError);
      expect(await row(lease.taskId)).toMatchObject({ status: 'running', retryCount: 0 });
    });

    it('heartbeats while the lease holds and reports false once it is taken over', async () => {
      const job = await createJob({ tenantId: newTenant() });
      const first = await claim(job.extractIds[0]!, 'worker-a');
      expect(await repo.heartbeat(first)).toBe(true);

      await repo.releaseTask(first, 'stale', []);
      expect(await repo.heartbeat(first)).toBe(false);
      const second = await claim(job.extractIds[0]!, 'worker-b');
      expect(await repo.heartbeat(first)).toBe(false);
      expect(await repo.heartbeat(second)).toBe(true);
    });

    it('reports false for a finished task', async () => {
      const job = await createJob({ tenantId: newTenant() });
      const lease = await claim(job.extractIds[0]!);
      await repo.completeTask(lease, checkpointOf(0), { conclusion: 'c', evidence: [], confidence: 1 }, [], 0);
      expect(await repo.heartbeat(lease)).toBe(false);
    });
  });

  describe('cancelJob', () => {
    it('cancels the job and its unfinished tasks, leaving finished ones', async () => {
      const tenantId = newTenant();
      const job = await createJob({ tenantId, extracts: 3 });
      const done = await claim(job.extractIds[0]!);
      await repo.completeTask(done, checkpointOf(0), { conclusion: 'c', evidence: [], confidence: 1 }, [], 0);
      const running = await claim(job.extractIds[1]!);

      expect(await jobs.cancelJob(tenantId, job.jobId)).toEqual({ status: 'cancelled', cancelled: true });
      expect(await row(job.jobId)).toMatchObject({ status: 'cancelled', error: 'cancelled by request' });
      expect(await row(job.extractIds[0]!)).toMatchObject({ status: 'success' });
      expect(await row(job.extractIds[1]!)).toMatchObject({ status: 'cancelled' });
      expect(await row(job.extractIds[2]!)).toMatchObject({ status: 'cancelled' });
      expect(await row(job.synthesizeId)).toMatchObject({ status: 'cancelled' });
      expect(await repo.heartbeat(running)).toBe(false);
    });

    it('does not cancel a finished job', async () => {
      const tenantId = newTenant();
      const job = await createJob({ tenantId, extracts: 1 });
      await jobs.cancelJob(tenantId, job.jobId);
      expect(await jobs.cancelJob(tenantId, job.jobId)).toEqual({ status: 'cancelled', cancelled: false });

      const failed = await createJob({ tenantId, extracts: 1 });
      const lease = await claim(failed.extractIds[0]!);
      await repo.failTask(lease, 'boom', []);
      expect(await jobs.cancelJob(tenantId, failed.jobId)).toEqual({ status: 'failed', cancelled: false });
      expect(await row(failed.jobId)).toMatchObject({ status: 'failed' });
    });

    it("returns null for another tenant's job and leaves it alone", async () => {
      const tenantId = newTenant();
      const job = await createJob({ tenantId });
      expect(await jobs.cancelJob(newTenant(), job.jobId)).toBeNull();
      expect(await jobs.cancelJob(tenantId, randomUUID())).toBeNull();
      expect(await row(job.jobId)).toMatchObject({ status: 'pending' });
    });

    it('returns null for a task id that is not a job', async () => {
      const tenantId = newTenant();
      const job = await createJob({ tenantId });
      expect(await jobs.cancelJob(tenantId, job.extractIds[0]!)).toBeNull();
      expect(await row(job.extractIds[0]!)).toMatchObject({ status: 'pending' });
    });
  });
});

describe('DAG fan-in (depends_on) and ready dependents', () => {
  /** triage → (reader-1, reader-2, optional historian) → merge: one job of four levels' worth of rules. */
  async function createDag(tenantId: string) {
    const jobId = randomUUID();
    const base = { jobId, tenantId, jobType: 'incident_review', parentTaskId: jobId, inputSummary: {}, totalSteps: 2 };
    const [triage, reader1, reader2, historian, merge] = Array.from({ length: 5 }, () => randomUUID()) as [string, string, string, string, string];
    const rows: NewTaskRow[] = [
      { ...base, taskId: triage, agentId: 'triage', role: 'triage', ordinal: 0 },
      { ...base, taskId: reader1, agentId: 'log_reader-1', role: 'log_reader', ordinal: 1, dependsOn: [triage] },
      { ...base, taskId: reader2, agentId: 'log_reader-2', role: 'log_reader', ordinal: 2, dependsOn: [triage] },
      { ...base, taskId: historian, agentId: 'historian', role: 'historian', ordinal: 3, optional: true, dependsOn: [triage] },
      { ...base, taskId: merge, agentId: 'merge', role: 'merge', ordinal: 4, dependsOn: [reader1, reader2, historian] },
    ];
    const root: NewTaskRow = { taskId: jobId, jobId, tenantId, jobType: 'incident_review', parentTaskId: null, agentId: 'supervisor', role: 'job', inputSummary: {}, totalSteps: 5 };
    expect(await jobs.createJob(root, rows)).toEqual({ created: true, jobId });
    return { jobId, triage, reader1, reader2, historian, merge };
  }

  const output = { conclusion: 'c', evidence: [], confidence: 1 };
  const complete = async (taskId: string, result?: (outcomes: TaskOutcomeRow[]) => unknown) => repo.completeTask(await claim(taskId), checkpointOf(0), output, [], 0, result);
  const readyIds = (finished: { ready: Array<{ taskId: string }> }) => finished.ready.map((t) => t.taskId).sort();

  it('returns the dependents that became ready; a task waits for every dependency, an optional skipped one included', async () => {
    const dag = await createDag(newTenant());
    expect(await repo.claimTask(dag.reader1, 'w')).toEqual({ claimed: false, reason: 'blocked', status: 'pending' });

    expect(readyIds(await complete(dag.triage))).toEqual([dag.reader1, dag.reader2, dag.historian].sort());
    expect(readyIds(await complete(dag.reader1))).toEqual([]);
    expect(readyIds(await complete(dag.reader2))).toEqual([]);
    expect(await repo.claimTask(dag.merge, 'w')).toEqual({ claimed: false, reason: 'blocked', status: 'pending' });

    const skipped = await repo.skipTask(await claim(dag.historian), 'skipped: no model target for 5 s', []);
    expect(skipped.ready).toEqual([{ taskId: dag.merge, jobId: dag.jobId, tenantId: expect.any(String), role: 'merge', traceContext: null }]);
    expect(await row(dag.historian)).toMatchObject({ status: 'skipped', error: 'skipped: no model target for 5 s' });

    const last = await complete(dag.merge, () => ({ review: 'done' }));
    expect(last).toEqual({ ready: [], jobCompleted: true });
    expect(await row(dag.jobId)).toMatchObject({ status: 'success', outputSummary: { review: 'done' } });
  });

  it('refuses to skip a required task', async () => {
    const dag = await createDag(newTenant());
    await expect(repo.skipTask(await claim(dag.triage), 'no', [])).rejects.toBeInstanceOf(LeaseLostError);
    expect((await row(dag.triage)).status).toBe('running');
  });

  it('two dependencies finishing at once: exactly one of them releases the dependent, and the last finisher completes the job', async () => {
    for (let round = 0; round < 5; round += 1) {
      const dag = await createDag(newTenant());
      await complete(dag.triage);
      await complete(dag.reader1);
      const [a, b] = await Promise.all([claim(dag.reader2, 'w1'), claim(dag.historian, 'w2')]);
      const finished = await Promise.all([
        repo.completeTask(a, checkpointOf(0), output, [], 0),
        repo.completeTask(b, checkpointOf(0), output, [], 0),
      ]);
      expect(finished.flatMap(readyIds)).toEqual([dag.merge]);
    }
  });

  it('many dependencies finishing at once (the one-round-trip finish): the dependent is released exactly once', async () => {
    for (let round = 0; round < 5; round += 1) {
      const job = await createJob({ tenantId: newTenant(), extracts: 6 });
      const leases = await Promise.all(job.extractIds.map((id, i) => claim(id, `w${i}`)));
      const finished = await Promise.all(leases.map((lease) => repo.completeTask(lease, checkpointOf(0), output, [], 0)));
      expect(finished.flatMap(readyIds)).toEqual([job.synthesizeId]);
      expect(finished.some((f) => f.jobCompleted)).toBe(false);
      for (const id of job.extractIds) expect(await row(id)).toMatchObject({ status: 'success', currentStep: 1, outputSummary: output });
      expect((await row(job.jobId)).status).toBe('running');
    }
  });

  it("the last tasks of a job finishing (and skipping) at once: the job completes exactly once, with every task's outcome", async () => {
    for (let round = 0; round < 8; round += 1) {
      const tenantId = newTenant();
      const jobId = randomUUID();
      const base = { jobId, tenantId, jobType: 'fan_out', parentTaskId: jobId, inputSummary: {}, totalSteps: 2 };
      const ids = Array.from({ length: 4 }, () => randomUUID());
      const rows: NewTaskRow[] = ids.map((taskId, i) => ({ ...base, taskId, agentId: `a-${i}`, role: 'a', ordinal: i, optional: i === 3 }));
      const root: NewTaskRow = { taskId: jobId, jobId, tenantId, jobType: 'fan_out', parentTaskId: null, agentId: 'supervisor', role: 'job', inputSummary: {}, totalSteps: 4 };
      expect(await jobs.createJob(root, rows)).toEqual({ created: true, jobId });
      const leases = await Promise.all(ids.map((id, i) => claim(id, `w${i}`)));
      const { repository, statements } = spiedRepository();
      const results: number[] = [];
      const resultOf = (outcomes: TaskOutcomeRow[]) => {
        results.push(outcomes.length);
        return { statuses: outcomes.map((o) => o.status) };
      };
      const finished = await Promise.all(
        leases.map((lease, i) => (i === 3 ? repository.skipTask(lease, 'skipped: test', [], resultOf) : repository.completeTask(lease, checkpointOf(0), output, [], 0, resultOf))),
      );
      expect(statements()).toContain('sy-finish-tasks');
      expect(finished.filter((f) => f.jobCompleted)).toHaveLength(1);
      expect(results).toEqual([4]);
      expect(await row(jobId)).toMatchObject({ status: 'success', outputSummary: { statuses: ['success', 'success', 'success', 'skipped'] } });
    }
  });

  it('group-commits concurrent finishes of several jobs: a stale lease among them refused alone, each dependent released once', async () => {
    const built = [await createJob({ tenantId: newTenant(), extracts: 3 }), await createJob({ tenantId: newTenant(), extracts: 3 })];
    const leases = await Promise.all(built.flatMap((job) => job.extractIds).map((id, i) => claim(id, `w${i}`)));
    const stale = leases[4]!;
    const { repository, statements } = spiedRepository();
    const results = await Promise.allSettled(
      leases.map((lease) => repository.completeTask(lease === stale ? { ...lease, version: lease.version + 1 } : lease, checkpointOf(0), output, [], 0)),
    );
    expect(statements()).toContain('sy-finish-tasks');
    expect(results.map((r) => r.status)).toEqual(leases.map((lease) => (lease === stale ? 'rejected' : 'fulfilled')));
    const ready = results.flatMap((r) => (r.status === 'fulfilled' ? readyIds(r.value) : []));
    expect(ready).toEqual([built[0]!.synthesizeId]);
    expect(await row(stale.taskId)).toMatchObject({ status: 'running', currentStep: 0 });
    expect(readyIds(await repository.completeTask(stale, checkpointOf(0), output, [], 0))).toEqual([built[1]!.synthesizeId]);
  });

  it('the one-round-trip finish refuses a stale lease or a wrong step and writes nothing', async () => {
    const job = await createJob({ tenantId: newTenant(), extracts: 2 });
    const lease = await claim(job.extractIds[0]!);
    await expect(repo.completeTask({ ...lease, version: lease.version + 1 }, checkpointOf(0), output, [], 0)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(repo.completeTask(lease, checkpointOf(1), output, [], 0)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(repo.skipTask(lease, 'a required task', [])).rejects.toBeInstanceOf(LeaseLostError);
    expect(await row(job.extractIds[0]!)).toMatchObject({ status: 'running', currentStep: 0, outputSummary: null });
    expect(await repo.completeTask(lease, checkpointOf(0), output, [], 0)).toEqual({ ready: [], jobCompleted: false });
    await expect(repo.completeTask(lease, checkpointOf(0), output, [], 0)).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('builds the job result from every task outcome, with item keys', async () => {
    const dag = await createDag(newTenant());
    for (const id of [dag.triage, dag.reader1, dag.reader2, dag.historian]) await complete(id);
    let seen: unknown;
    await complete(dag.merge, (outcomes) => {
      seen = outcomes.map((o) => [o.role, o.status]);
      return { n: outcomes.length };
    });
    expect(seen).toEqual([
      ['triage', 'success'],
      ['log_reader', 'success'],
      ['log_reader', 'success'],
      ['historian', 'success'],
      ['merge', 'success'],
    ]);
    expect((await row(dag.jobId)).outputSummary).toEqual({ n: 5 });
  });
});

describe("a planner's subtasks (goal jobs)", () => {
  async function createGoalJob(tenantId: string) {
    const jobId = randomUUID();
    const [planner, combine] = [randomUUID(), randomUUID()];
    const base = { jobId, tenantId, jobType: 'goal', parentTaskId: jobId, inputSummary: {}, totalSteps: 2 };
    const root: NewTaskRow = { taskId: jobId, jobId, tenantId, jobType: 'goal', parentTaskId: null, agentId: 'supervisor', role: 'job', inputSummary: {}, totalSteps: 2 };
    await jobs.createJob(root, [
      { ...base, taskId: planner, agentId: 'planner', role: 'planner', ordinal: 0 },
      { ...base, taskId: combine, agentId: 'combine', role: 'combine', ordinal: 1, dependsOn: [planner] },
    ]);
    return { jobId, tenantId, planner, combine };
  }

  /** gather → analyse (after gather) → write (after both), as the planner's materialised rows. */
  function subtasksOf(job: { jobId: string; tenantId: string; planner: string }) {
    const [gather, analyse, write] = [randomUUID(), randomUUID(), randomUUID()];
    const base = { jobId: job.jobId, tenantId: job.tenantId, jobType: 'goal', parentTaskId: job.planner, totalSteps: 2 };
    const rows: NewTaskRow[] = [
      { ...base, taskId: gather, agentId: 'researcher:gather', role: 'researcher', ordinal: 1, dependsOn: [job.planner], inputSummary: { instruction: 'find', item_key: 'gather' } },
      { ...base, taskId: analyse, agentId: 'analyst:analyse', role: 'analyst', ordinal: 2, dependsOn: [job.planner, gather], inputSummary: { instruction: 'think', item_key: 'analyse' } },
      { ...base, taskId: write, agentId: 'writer:write', role: 'writer', ordinal: 3, dependsOn: [job.planner, gather, analyse], inputSummary: { instruction: 'write', item_key: 'write' } },
    ];
    return { rows, gather, analyse, write };
  }

  const plan = { subtasks: [] };
  const output = { conclusion: 'c', evidence: [], confidence: 1 };

  it("writes the subtasks with the planner's completion, extends combine's depends_on to them, and makes the first level ready", async () => {
    const job = await createGoalJob(newTenant());
    const { rows, gather, analyse, write } = subtasksOf(job);
    const finished = await repo.completeTask(await claim(job.planner), checkpointOf(0), plan, [], 0, () => null, rows);
    expect(finished).toEqual({ ready: [{ taskId: gather, jobId: job.jobId, tenantId: job.tenantId, role: 'researcher', traceContext: null }], jobCompleted: false });
    expect(await row(gather)).toMatchObject({ status: 'pending', parentTaskId: job.planner, dependsOn: [job.planner], inputSummary: { instruction: 'find', item_key: 'gather' } });
    expect((await row(job.combine)).dependsOn).toEqual([job.planner, gather, analyse, write]);
    expect((await row(job.combine)).ordinal).toBe(4);
    expect((await row(job.jobId)).totalSteps).toBe(5);
    expect(await repo.claimTask(job.combine, 'w')).toEqual({ claimed: false, reason: 'blocked', status: 'pending' });

    // Dependency order: each level readies the next, combine comes last and completes the job.
    expect((await repo.completeTask(await claim(gather), checkpointOf(0), output, [], 0)).ready.map((t) => t.taskId)).toEqual([analyse]);
    expect((await repo.completeTask(await claim(analyse), checkpointOf(0), output, [], 0)).ready.map((t) => t.taskId)).toEqual([write]);
    expect((await repo.completeTask(await claim(write), checkpointOf(0), output, [], 0)).ready.map((t) => t.taskId)).toEqual([job.combine]);
    const last = await repo.completeTask(await claim(job.combine), checkpointOf(0), output, [], 0, (outcomes) => outcomes.map((o) => [o.role, o.key ?? null]));
    expect(last.jobCompleted).toBe(true);
    expect((await row(job.jobId)).outputSummary).toEqual([
      ['planner', null],
      ['researcher', 'gather'],
      ['analyst', 'analyse'],
      ['writer', 'write'],
      ['combine', null],
    ]);
  });

  it('never half-materialises: a subtask row that cannot be written leaves the planner running and nothing written', async () => {
    const job = await createGoalJob(newTenant());
    const { rows, gather } = subtasksOf(job);
    const lease = await claim(job.planner);
    const clash = { ...rows[2]!, taskId: job.combine };
    await expect(repo.completeTask(lease, checkpointOf(0), plan, [], 0, () => null, [rows[0]!, rows[1]!, clash])).rejects.toThrow();
    expect(await repo.findTask(gather)).toBeUndefined();
    expect(await row(job.planner)).toMatchObject({ status: 'running', outputSummary: null });
    expect((await row(job.combine)).dependsOn).toEqual([job.planner]);
  });

  it('writes no subtask for a planner whose lease is gone', async () => {
    const job = await createGoalJob(newTenant());
    const { rows, gather } = subtasksOf(job);
    const lease = await claim(job.planner);
    await expect(repo.completeTask({ ...lease, version: lease.version + 1 }, checkpointOf(0), plan, [], 0, () => null, rows)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await repo.findTask(gather)).toBeUndefined();
  });
});

describe('retryJob', () => {
  const output = { conclusion: 'ok', evidence: [], confidence: 1 };

  it("puts a failed job's failed and cancelled tasks back with their checkpoints, keeps finished ones, fences old leases", async () => {
    const tenantId = newTenant();
    const job = await createJob({ tenantId, extracts: 3 });
    const [first, second, third] = job.extractIds as [string, string, string];
    await repo.completeTask(await claim(first), checkpointOf(0), output, [], 0);
    const runningSibling = await claim(third, 'worker-c');
    const failing = await claim(second, 'worker-b');
    await repo.checkpoint(failing, checkpointOf(0, 'prepare'), [route(0)], 0.25);
    await repo.failTask(failing, 'upstream rejected the request', []);
    const before = await row(second);

    expect(await jobs.retryJob(tenantId, job.jobId)).toEqual({ retried: true, tasks: 3 });
    expect(await row(job.jobId)).toMatchObject({ status: 'queued', error: null, finishedAt: null });
    expect(await row(first)).toMatchObject({ status: 'success', outputSummary: output, retryCount: 0 });
    const retried = await row(second);
    expect(retried).toMatchObject({
      status: 'queued',
      error: null,
      finishedAt: null,
      leaseOwner: null,
      currentStep: 1,
      stepCheckpoints: [checkpointOf(0, 'prepare')],
      costUsd: 0.25,
      retryCount: before.retryCount + 1,
      retryBase: before.retryCount + 1,
      leaseVersion: before.leaseVersion + 1,
      queueJobId: `${second}.r${before.retryCount + 1}`,
    });
    expect(await row(third)).toMatchObject({ status: 'queued' });
    expect(await row(job.synthesizeId)).toMatchObject({ status: 'queued' });
    // The worker that held the cancelled sibling stays fenced out.
    await expect(repo.checkpoint(runningSibling, checkpointOf(0), [], 0)).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('retries a cancelled job; keeps a skipped optional task that a finished task built on', async () => {
    const tenantId = newTenant();
    const job = await createJob({ tenantId, extracts: 2, optional: [true, false] });
    const [optional, required] = job.extractIds as [string, string];
    await repo.skipTask(await claim(optional), 'skipped: no target', []);
    await repo.completeTask(await claim(required), checkpointOf(0), output, [], 0);
    expect((await jobs.cancelJob(tenantId, job.jobId))?.cancelled).toBe(true);

    expect(await jobs.retryJob(tenantId, job.jobId)).toEqual({ retried: true, tasks: 2 });
    expect(await row(optional)).toMatchObject({ status: 'queued' });
    expect(await row(job.synthesizeId)).toMatchObject({ status: 'queued' });

    const other = await createJob({ tenantId, extracts: 1, optional: [true] });
    await repo.skipTask(await claim(other.extractIds[0]!), 'skipped: no target', []);
    await repo.completeTask(await claim(other.synthesizeId), checkpointOf(0), output, [], 0);
    await database.db.update(agentTaskState).set({ status: 'failed' }).where(eq(agentTaskState.taskId, other.jobId));
    expect(await jobs.retryJob(tenantId, other.jobId)).toEqual({ retried: true, tasks: 0 });
    expect(await row(other.extractIds[0]!)).toMatchObject({ status: 'skipped' });
  });

  it("forgets the stored answers of a retried task's unfinished steps (a bad plan would be reused), not those of finished ones", async () => {
    const tenantId = newTenant();
    const job = await createJob({ tenantId, extracts: 2 });
    const [done, failing] = job.extractIds as [string, string];
    await repo.completeTask(await claim(done), checkpointOf(0), output, [], 0);
    const lease = await claim(failing);
    await repo.checkpoint(lease, checkpointOf(0, 'prepare'), [], 0);
    await repo.failTask(lease, 'BadOutputError: replies do not match', []);
    const answer = (key: string, taskId: string) =>
      database.pool.query(
        `insert into model_call_results (idempotency_key, tenant_id, task_id, content, target, model, rule, usage) values ($1, $2, $3, 'x', 't', 'm', 'r', '{"inputTokens":1,"outputTokens":1}')`,
        [key, tenantId, taskId],
      );
    for (const key of [`${done}:0:1`, `${failing}:0:1`, `${failing}:1:1`, `${failing}:1:2`]) await answer(key, key.slice(0, 36));
    await jobs.retryJob(tenantId, job.jobId);
    const keys = (await database.pool.query<{ k: string }>('select idempotency_key as k from model_call_results where tenant_id = $1 order by 1', [tenantId])).rows.map((r) => r.k);
    expect(keys).toEqual([`${done}:0:1`, `${failing}:0:1`].sort());
  });

  it('refuses a job that is not failed or cancelled, and finds no job of another tenant', async () => {
    const tenantId = newTenant();
    const job = await createJob({ tenantId });
    expect(await jobs.retryJob(tenantId, job.jobId)).toEqual({ retried: false, status: 'pending' });
    expect(await jobs.retryJob(newTenant(), job.jobId)).toBeNull();
    expect(await row(job.jobId)).toMatchObject({ status: 'pending' });
  });
});

describe('claimTask brings the job context', () => {
  it("returns the job's meta, workflow hash, type and task count with the claim", async () => {
    const tenantId = newTenant();
    const job = buildJob({ tenantId, extracts: 2 });
    await jobs.createJob({ ...job.root, workflowHash: 'hash-1', inputSummary: { input: {}, meta: { sensitivity: 'sensitive' } } }, job.tasks);
    const claimed = await repo.claimTask(job.extractIds[0]!, 'worker-a');
    if (!claimed.claimed) throw new Error('not claimed');
    expect(claimed.job).toEqual({ meta: { sensitivity: 'sensitive' }, workflowHash: 'hash-1', jobType: 'doc_review', taskCount: 3 });
  });
});
