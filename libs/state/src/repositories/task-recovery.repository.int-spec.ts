/**
 * The sweeper's queries against a real Postgres with the real migrations: concurrent sweeps
 * take disjoint sets, a take-over fences the old owner out, the retry limit fails the task
 * and its job, and the fan-in dependency check of the claim and the reconcile page.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { NewTaskRow } from '../schema';
import { createTestDatabase, type TestDatabase } from '../testing/test-database';
import { TaskRecoveryRepository, type StaleDecision } from './task-recovery.repository';
import { AttemptLedgerRepository } from './attempt-ledger.repository';
import { JobRepository } from './job.repository';
import { LeaseLostError, type Lease } from './task-clauses';
import { TaskLeaseRepository } from './task-lease.repository';

let database: TestDatabase;
let jobs: JobRepository;
let tasks: TaskLeaseRepository;
let recovery: TaskRecoveryRepository;

beforeAll(async () => {
  database = await createTestDatabase();
  jobs = new JobRepository(database.db);
  tasks = new TaskLeaseRepository(database.db);
  recovery = new TaskRecoveryRepository(database.db);
});

afterAll(async () => {
  await database?.destroy();
});

async function createJob(extracts: number, optional: boolean[] = []) {
  const jobId = randomUUID();
  const tenantId = `tenant-${jobId.slice(0, 8)}`;
  const base = { jobId, tenantId, jobType: 'doc_review', parentTaskId: jobId };
  const root: NewTaskRow = { ...base, taskId: jobId, parentTaskId: null, agentId: 'supervisor', role: 'job', inputSummary: {}, totalSteps: extracts + 1 };
  const extractRows: NewTaskRow[] = Array.from({ length: extracts }, (_, i) => ({
    ...base,
    taskId: randomUUID(),
    agentId: `extract-${i + 1}`,
    role: 'extract',
    ordinal: i,
    optional: optional[i] ?? false,
    inputSummary: {},
    totalSteps: 2,
  }));
  const synthesize: NewTaskRow = {
    ...base,
    taskId: randomUUID(),
    agentId: 'synthesize',
    role: 'synthesize',
    ordinal: extracts,
    dependsOn: extractRows.map((r) => r.taskId),
    inputSummary: {},
    totalSteps: 2,
  };
  await jobs.createJob(root, [...extractRows, synthesize]);
  return { jobId, extractIds: extractRows.map((r) => r.taskId as string), synthesizeId: synthesize.taskId as string };
}

async function claim(taskId: string, owner = 'worker-a'): Promise<Lease> {
  const result = await tasks.claimTask(taskId, owner);
  if (!result.claimed) throw new Error(`could not claim ${taskId}: ${result.reason}`);
  return result.lease;
}

/** As if the owner stopped heartbeating a minute ago. */
async function silence(taskIds: string[]): Promise<void> {
  await database.db.execute(sql`update agent_task_state set updated_at = now() - interval '1 minute' where task_id in (${sql.join(
    taskIds.map((id) => sql`${id}::uuid`),
    sql`, `,
  )})`);
}

const requeue = (): StaleDecision => ({ action: 'requeue' });

async function completeTask(lease: Lease) {
  await tasks.checkpoint(lease, { step: 0, name: 'prepare', summary: {}, completed_at: new Date().toISOString() }, [], 0);
  await tasks.completeTask(lease, { step: 1, name: 'extract', summary: {}, completed_at: new Date().toISOString() }, { conclusion: 'c', evidence: [], confidence: 1 }, [], 0);
}

describe('TaskRecoveryRepository (Postgres)', () => {
  it('lets two concurrent sweeps claim each stale task exactly once', async () => {
    const job = await createJob(12);
    for (const id of job.extractIds) await claim(id);
    await silence([...job.extractIds, job.jobId]);
    const mine = <R extends { jobId: string }>(rows: R[]) => rows.filter((r) => r.jobId === job.jobId);

    const [a, b] = await Promise.all([
      recovery.sweepStale({ sweeperId: 'sweeper:a', staleAfterMs: 5_000, limit: 100, decide: requeue }),
      recovery.sweepStale({ sweeperId: 'sweeper:b', staleAfterMs: 5_000, limit: 100, decide: requeue }),
    ]);
    const claimed = [...mine(a), ...mine(b)].map((t) => t.taskId).sort();
    expect(claimed).toEqual([...job.extractIds].sort());
    // The job's root row is running too, without a heartbeat of its own: never swept.
    expect(claimed).not.toContain(job.jobId);
    expect((await tasks.findTask(job.jobId))!.status).toBe('running');
    // A third sweep finds nothing left: they are pending again, with a fresh heartbeat.
    expect(mine(await recovery.sweepStale({ sweeperId: 'sweeper:c', staleAfterMs: 5_000, limit: 100, decide: requeue }))).toEqual([]);
    for (const id of job.extractIds) {
      const row = (await tasks.findTask(id))!;
      expect(row).toMatchObject({ status: 'pending', retryCount: 1, leaseVersion: 2, queueJobId: `${id}.r1` });
      expect(row.leaseOwner).toMatch(/^sweeper:[ab]$/);
    }
  });

  it('takes the heartbeat (updated_at) as the sign of life: a checkpoint leaves it alone, a heartbeat moves it', async () => {
    const job = await createJob(2);
    const [checkpointed, heartbeated] = await Promise.all(job.extractIds.map((id) => claim(id)));
    await silence(job.extractIds);
    await tasks.checkpoint(checkpointed!, { step: 0, name: 'prepare', summary: {}, completed_at: new Date().toISOString() }, [], 0);
    expect(await tasks.heartbeat(heartbeated!)).toBe(true);
    const after = await Promise.all(job.extractIds.map(async (id) => (await tasks.findTask(id))!));
    expect(after[0]).toMatchObject({ currentStep: 1 });
    expect(Date.now() - after[0]!.updatedAt.getTime()).toBeGreaterThan(50_000);
    expect(Date.now() - after[1]!.updatedAt.getTime()).toBeLessThan(30_000);
    const listed = await recovery.listForAdmin({ stale: true, staleAfterMs: 5_000, limit: 1000 });
    expect(listed.filter((r) => r.jobId === job.jobId).map((r) => r.taskId)).toEqual([checkpointed!.taskId]);
    const swept = await recovery.sweepStale({ sweeperId: 'sweeper:a', staleAfterMs: 5_000, limit: 100, decide: requeue });
    expect(swept.filter((r) => r.jobId === job.jobId).map((r) => r.taskId)).toEqual([checkpointed!.taskId]);
  });

  it('heartbeats many leases in one statement, each under its own fence, and names the ones still held', async () => {
    const job = await createJob(3);
    const [held, takenOver, finished] = await Promise.all(job.extractIds.map((id) => claim(id)));
    await silence(job.extractIds);
    await recovery.sweepStale({ sweeperId: 'sweeper:a', staleAfterMs: 5_000, limit: 100, decide: (task) => (task.taskId === takenOver!.taskId ? { action: 'requeue' } : { action: 'skip' }) });
    await completeTask(finished!);
    expect(await tasks.heartbeatMany([held!, takenOver!, finished!])).toEqual(new Set([held!.taskId]));
    const rows = await Promise.all(job.extractIds.map(async (id) => (await tasks.findTask(id))!));
    expect(Date.now() - rows[0]!.updatedAt.getTime()).toBeLessThan(30_000);
    // The taken-over task keeps what the sweeper wrote: the old owner's heartbeat changed nothing.
    expect(rows[1]).toMatchObject({ status: 'pending', leaseOwner: 'sweeper:a' });
    expect(rows[2]!.status).toBe('success');
    expect(await tasks.heartbeatMany([])).toEqual(new Set());
  });

  it('writes checkpoints into columns no index names, with room on the page, so Postgres can update those rows in place (HOT)', async () => {
    const indexed = await database.pool.query<{ column: string }>(
      `select distinct a.attname as column
       from pg_index i
       join pg_attribute a on a.attrelid = i.indrelid
       where i.indrelid = 'agent_task_state'::regclass
         and (a.attnum = any(i.indkey) or pg_get_expr(i.indpred, i.indrelid) ~ ('\\m' || a.attname || '\\M'))`,
    );
    const columns = indexed.rows.map((r) => r.column);
    expect(columns).toEqual(expect.arrayContaining(['status', 'updated_at', 'task_id']));
    for (const written of ['current_step', 'step_checkpoints', 'route_targets', 'cost_usd']) expect(columns).not.toContain(written);
    const options = await database.pool.query<{ reloptions: string[] }>(`select reloptions from pg_class where oid = 'agent_task_state'::regclass`);
    expect(options.rows[0]!.reloptions).toContain('fillfactor=80');
  });

  it('fences the presumed-dead owner out: its checkpoint, heartbeat and completion are refused', async () => {
    const job = await createJob(1);
    const old = await claim(job.extractIds[0]!);
    await silence(job.extractIds);
    await recovery.sweepStale({ sweeperId: 'sweeper:a', staleAfterMs: 5_000, limit: 100, decide: requeue });
    const fresh = await claim(job.extractIds[0]!, 'worker-b');
    expect(fresh.version).toBe(old.version + 2);

    expect(await tasks.heartbeat(old)).toBe(false);
    await expect(tasks.checkpoint(old, { step: 0, name: 'prepare', summary: {}, completed_at: '' }, [], 0)).rejects.toBeInstanceOf(LeaseLostError);
    await completeTask(fresh);
    await expect(completeTask(old)).rejects.toBeInstanceOf(LeaseLostError);
    expect((await tasks.findTask(job.extractIds[0]!))!.status).toBe('success');
  });

  it('fails a task at the retry limit with the reason, fails its job and cancels the rest', async () => {
    const job = await createJob(2);
    await claim(job.extractIds[0]!);
    await silence([job.extractIds[0]!]);
    const swept = await recovery.sweepStale({
      sweeperId: 'sweeper:a',
      staleAfterMs: 5_000,
      limit: 100,
      decide: () => ({ action: 'fail', reason: 'abandoned: retry limit reached' }),
    });
    expect(swept.filter((t) => t.jobId === job.jobId)).toEqual([expect.objectContaining({ action: 'fail', jobFailed: true })]);
    const failed = (await tasks.findTask(job.extractIds[0]!))!;
    expect(failed).toMatchObject({ status: 'failed', error: 'abandoned: retry limit reached', retryCount: 1 });
    expect((await tasks.findTask(job.jobId))!).toMatchObject({ status: 'failed', error: 'task extract-1 failed: abandoned: retry limit reached' });
    expect((await tasks.findTask(job.extractIds[1]!))!.status).toBe('cancelled');
    expect((await tasks.findTask(job.synthesizeId))!.status).toBe('cancelled');
  });

  it('hands the sweep a retried task with its retry base: the retries since the retry by request, not all of them', async () => {
    const job = await createJob(1);
    const [extract] = job.extractIds as [string];
    await claim(extract);
    await silence([extract]);
    await recovery.sweepStale({ sweeperId: 'sweeper:a', staleAfterMs: 5_000, limit: 100, decide: () => ({ action: 'fail', reason: 'abandoned: retry limit reached' }) });
    const tenantId = (await tasks.findTask(job.jobId))!.tenantId;
    expect(await jobs.retryJob(tenantId, job.jobId)).toEqual({ retried: true, tasks: 2 });
    await database.db.execute(sql`update agent_task_state set status = 'pending' where job_id = ${job.jobId}`);
    await claim(extract, 'worker-b');
    await silence([extract]);

    const seen: Array<{ retryCount: number; retryBase: number }> = [];
    await recovery.sweepStale({
      sweeperId: 'sweeper:b',
      staleAfterMs: 5_000,
      limit: 100,
      decide: (task) => {
        if (task.taskId === extract) seen.push({ retryCount: task.retryCount, retryBase: task.retryBase });
        return requeue();
      },
    });
    expect(seen).toEqual([{ retryCount: 2, retryBase: 2 }]);
  });

  it('keeps a fan-in task blocked until every required dependency finished', async () => {
    const job = await createJob(2, [false, true]);
    expect(await tasks.claimTask(job.synthesizeId, 'worker-a')).toEqual({ claimed: false, reason: 'blocked', status: 'pending' });
    const page = async () => (await recovery.pendingPage(1_000)).tasks.find((t) => t.taskId === job.synthesizeId)!;
    expect(await page()).toMatchObject({ blocked: true, depsDoneAt: null });

    await completeTask(await claim(job.extractIds[0]!));
    expect((await tasks.claimTask(job.synthesizeId, 'worker-a')).claimed).toBe(false);
    // The optional extract failing does not hold the synthesis up.
    await tasks.failTask(await claim(job.extractIds[1]!), 'bad document', []);
    const ready = await page();
    expect(ready.blocked).toBe(false);
    expect(ready.depsDoneAt).toBeInstanceOf(Date);
    expect((await tasks.claimTask(job.synthesizeId, 'worker-a')).claimed).toBe(true);
  });

  it('walks pending tasks a page at a time with a keyset cursor', async () => {
    const job = await createJob(5);
    const seen = new Set<string>();
    let cursor;
    for (let i = 0; i < 100; i += 1) {
      const { tasks: page } = await recovery.pendingPage(2, cursor);
      for (const t of page) seen.add(t.taskId);
      const last = page.at(-1);
      if (page.length < 2 || !last) break;
      cursor = { updatedAt: last.updatedAt, taskId: last.taskId };
    }
    for (const id of [...job.extractIds, job.synthesizeId]) expect(seen.has(id)).toBe(true);
    const seenAt = (await tasks.findTask(job.extractIds[0]!))!.updatedAt;
    expect(await recovery.markRequeued(job.extractIds[0]!, `${job.extractIds[0]}.r0`, seenAt)).toBe(true);
    // A second sweeper that saw the same row loses the compare-and-set: one enqueue only.
    expect(await recovery.markRequeued(job.extractIds[0]!, `${job.extractIds[0]}.r0`, seenAt)).toBe(false);
    expect((await tasks.findTask(job.extractIds[0]!))!.queueJobId).toBe(`${job.extractIds[0]}.r0`);
  });

  it('lists stale and resumed tasks for the admin view', async () => {
    const job = await createJob(2);
    await claim(job.extractIds[0]!);
    await claim(job.extractIds[1]!);
    await silence([job.extractIds[0]!]);
    const stale = await recovery.listForAdmin({ stale: true, staleAfterMs: 5_000, limit: 100 });
    expect(stale.map((t) => t.taskId)).toContain(job.extractIds[0]);
    expect(stale.map((t) => t.taskId)).not.toContain(job.extractIds[1]);
    expect(stale.find((t) => t.taskId === job.extractIds[0])).toMatchObject({ stale: true, leaseOwner: 'worker-a', retryCount: 0 });
    await recovery.sweepStale({ sweeperId: 'sweeper:a', staleAfterMs: 5_000, limit: 100, decide: requeue });
    const resumed = await recovery.listForAdmin({ resumed: true, staleAfterMs: 5_000, limit: 100 });
    expect(resumed.find((t) => t.taskId === job.extractIds[0])).toMatchObject({ retryCount: 1, leaseOwner: 'sweeper:a', stale: false });
  });
});

describe('giving up on tasks: optional ones skipped, in-flight attempts abandoned', () => {
  const ledger = () => new AttemptLedgerRepository(database.db, database.pool);
  const inFlight = (taskId: string, jobId: string, attemptId: string) => ({
    at: new Date(),
    source: 'worker',
    tenantId: 'acme',
    jobId,
    taskId,
    step: 1,
    target: 'cloud_main',
    targetType: 'cloud',
    model: 'gpt',
    rule: 'r',
    outcome: 'in_flight',
    inputTokens: 10,
    usageEstimated: true,
    latencyMs: 0,
    costUsd: 0,
    attemptId,
  });
  const outcomes = async (jobId: string) =>
    (await database.pool.query<{ attempt_id: string; outcome: string }>('select attempt_id, outcome from model_call_ledger where job_id = $1 order by attempt_id', [jobId])).rows.map((r) => [
      r.attempt_id,
      r.outcome,
    ]);

  it('at the retry limit, an optional stale task is handed to the sweeper to skip (not failed), and skipping it readies its dependents', async () => {
    const job = await createJob(2, [false, true]);
    await completeTask(await claim(job.extractIds[0]!));
    await claim(job.extractIds[1]!);
    await silence([job.extractIds[1]!]);
    const swept = (
      await recovery.sweepStale({ sweeperId: 'sweeper:a', staleAfterMs: 5_000, limit: 100, decide: () => ({ action: 'fail', reason: 'abandoned: retry limit reached' }) })
    ).filter((t) => t.jobId === job.jobId);
    expect(swept).toEqual([expect.objectContaining({ action: 'give_up', reason: 'abandoned: retry limit reached', lease: { taskId: job.extractIds[1], owner: 'sweeper:a', version: 2 } })]);
    const given = swept[0]!;
    if (given.action !== 'give_up') throw new Error('expected give_up');
    expect((await tasks.findTask(job.extractIds[1]!))!).toMatchObject({ status: 'running', leaseOwner: 'sweeper:a', retryCount: 1 });

    const finished = await tasks.skipTask(given.lease, `skipped: ${given.reason}`, []);
    expect(finished.ready.map((t) => t.taskId)).toEqual([job.synthesizeId]);
    expect((await tasks.findTask(job.extractIds[1]!))!).toMatchObject({ status: 'skipped', error: 'skipped: abandoned: retry limit reached' });
  });

  it('the last unfinished task skipped by the sweeper completes the job', async () => {
    const job = await createJob(1, [true]);
    await claim(job.extractIds[0]!);
    await silence([job.extractIds[0]!]);
    // synthesize needs no dependency done to be done itself: finish it first.
    await database.db.execute(sql`update agent_task_state set depends_on = '{}' where task_id = ${job.synthesizeId}::uuid`);
    await completeTask(await claim(job.synthesizeId));
    const [given] = (await recovery.sweepStale({ sweeperId: 'sweeper:a', staleAfterMs: 5_000, limit: 100, decide: () => ({ action: 'fail', reason: 'abandoned' }) })).filter(
      (t) => t.jobId === job.jobId,
    );
    if (given?.action !== 'give_up') throw new Error('expected give_up');
    expect(await tasks.skipTask(given.lease, 'skipped: abandoned', [], () => ({ done: true }))).toEqual({ ready: [], jobCompleted: true });
    expect((await tasks.findTask(job.jobId))!).toMatchObject({ status: 'success', outputSummary: { done: true } });
  });

  it("marks the in-flight attempts of a task failed at the retry limit, and of the siblings it cancels, abandoned", async () => {
    const job = await createJob(2);
    await claim(job.extractIds[0]!);
    await claim(job.extractIds[1]!, 'worker-b');
    await ledger().recordStarted(inFlight(job.extractIds[0]!, job.jobId, 'a:1'), { abandonEarlier: false });
    await ledger().recordStarted(inFlight(job.extractIds[1]!, job.jobId, 'b:1'), { abandonEarlier: false });
    await silence([job.extractIds[0]!]);
    await recovery.sweepStale({ sweeperId: 'sweeper:a', staleAfterMs: 5_000, limit: 100, decide: () => ({ action: 'fail', reason: 'abandoned: retry limit reached' }) });
    expect(await outcomes(job.jobId)).toEqual([
      ['a:1', 'abandoned'],
      ['b:1', 'abandoned'],
    ]);
  });

  it("marks a cancelled job's in-flight attempts abandoned", async () => {
    const job = await createJob(1);
    await claim(job.extractIds[0]!);
    await ledger().recordStarted(inFlight(job.extractIds[0]!, job.jobId, 'c:1'), { abandonEarlier: false });
    const tenantId = (await tasks.findTask(job.jobId))!.tenantId;
    expect((await jobs.cancelJob(tenantId, job.jobId))?.cancelled).toBe(true);
    expect(await outcomes(job.jobId)).toEqual([['c:1', 'abandoned']]);
  });
});
