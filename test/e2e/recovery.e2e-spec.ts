/**
 * Crash recovery with the real processes: a worker killed mid-step, a worker frozen past the
 * stale threshold that comes back, two supervisors sweeping at once, and the retry limit.
 * Liveness is shortened (heartbeat 300 ms, stale after 1.5 s, sweep every 300 ms) and the sim
 * slowed, so steps are caught mid-flight.
 */
import { FAST_LIVENESS, callsOfTask, logEvents, submitJobs, taskRows, waitForJobs } from '../support/recovery-helpers';
import { waitFor } from '../support/processes';
import { TestStack } from '../support/stack';

// Stacks of several real processes, and recoveries that take seconds: well above the default 5 s.
jest.setTimeout(150_000);

const ADMIN_TOKEN = 'e2e-recovery-admin-token-0123';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe('crash recovery: kill -9, two sweepers, admin view', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0, env: { ...FAST_LIVENESS, ADMIN_TOKEN } });
    await stack.startSupervisor();
    await stack.startWorker({ WORKER_ID: 'victim' });
    await stack.startWorker({ WORKER_ID: 'survivor' });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('resumes the tasks of a worker killed mid-step at their checkpointed step, each completed once', async () => {
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 2_500 });
    const jobIds = await submitJobs(stack, 2, 4);
    // Wait until the victim holds tasks in their model step (step 0 checkpointed).
    const victimTasks = await waitFor(
      'the victim to be mid-step',
      async () => {
        const held = (await taskRows(stack, jobIds)).filter((t) => t.lease_owner === 'victim' && t.status === 'running' && t.current_step === 1);
        return held.length > 0 ? held : undefined;
      },
      30_000,
      50,
    );
    stack.workers[0]!.kill('SIGKILL');
    await stack.workers[0]!.waitForExit();
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 300 });

    const statuses = await waitForJobs(stack, jobIds);
    expect([...statuses.values()].map((s) => s.status)).toEqual(['success', 'success']);

    const rows = await taskRows(stack, jobIds);
    const calls = await stack.simCalls();
    for (const before of victimTasks) {
      const after = rows.find((r) => r.task_id === before.task_id)!;
      expect(after.status).toBe('success');
      expect(after.retry_count).toBeGreaterThanOrEqual(1);
      expect(after.lease_owner).toBe('survivor');
      // Resumed at step 1: step 0 kept its checkpoint from before the kill, and no step ran twice.
      expect(after.step_checkpoints.map((c) => c.step)).toEqual([0, 1]);
      expect(after.step_checkpoints[0]).toEqual(before.step_checkpoints[0]);
      // Only the model step called the model: the killed call, and the one that completed it.
      const own = callsOfTask(calls, before.task_id);
      expect(own.every((c) => c.headers['x-switchyard-step'] === '1')).toBe(true);
      expect(own.length).toBeLessThanOrEqual(2);
    }
    for (const row of rows) {
      expect(row.step_checkpoints.map((c) => c.step)).toEqual([0, 1]);
      // Steps that completed never called the model again: at most one call per task beyond
      // the one a kill interrupted.
      expect(callsOfTask(calls, row.task_id).length).toBeLessThanOrEqual(row.retry_count + 1);
    }

    // No task completed twice (completeTask is fenced by the lease; the logs agree): at most
    // one "task completed" per task across every worker.
    const completions = stack.workers.flatMap((w) => logEvents(w.output, 'task completed')).map((e) => e.task_id as string);
    for (const row of rows) expect(completions.filter((id) => id === row.task_id).length).toBeLessThanOrEqual(1);

    // Each stale task was taken over exactly once, by one of the two sweeping supervisors:
    // lease versions 1 (victim), 2 (the sweeper's takeover), 3 (the survivor's claim).
    for (const before of victimTasks) {
      const after = rows.find((r) => r.task_id === before.task_id)!;
      expect({ task: after.task_id, retry_count: after.retry_count, lease_version: after.lease_version }).toEqual({ task: before.task_id, retry_count: 1, lease_version: 3 });
    }
    const takeovers = [stack.supervisor, ...stack.extraSupervisors].flatMap((s) => logEvents(s.output, 'stale task taken over; enqueued to resume'));
    expect(takeovers.length).toBeGreaterThan(0);
    expect(new Set(takeovers.map((e) => e.task_id)).size).toBe(takeovers.length);
    const jobRoots = new Set(jobIds);
    expect(takeovers.filter((e) => jobRoots.has(e.task_id as string))).toEqual([]);
  });

  it('shows resumed tasks in GET /admin/tasks and queue counts in GET /admin/queues', async () => {
    const unauthorized = await stack.request('GET', '/admin/tasks');
    expect(unauthorized.status).toBe(401);
    const resumed = await stack.request<{ tasks: { task_id: string; retry_count: number; lease_owner: string; last_heartbeat: string; role: string; queue_job_id: string }[] }>(
      'GET',
      '/admin/tasks?resumed=true&limit=50',
      undefined,
      admin,
    );
    expect(resumed.status).toBe(200);
    expect(resumed.json.tasks.length).toBeGreaterThan(0);
    for (const task of resumed.json.tasks) {
      expect(task.retry_count).toBeGreaterThanOrEqual(1);
      expect(task.last_heartbeat).toEqual(expect.any(String));
      expect(task.role).toBe('extract');
    }
    const stale = await stack.request<{ tasks: unknown[] }>('GET', '/admin/tasks?stale=true', undefined, admin);
    expect(stale.status).toBe(200);
    expect(stale.json.tasks).toEqual([]);
    const bad = await stack.request('GET', '/admin/tasks?stale=maybe', undefined, admin);
    expect(bad.status).toBe(400);

    const queues = await stack.request<{ queues: { queue: string; counts: Record<string, number> }[] }>('GET', '/admin/queues', undefined, admin);
    expect(queues.status).toBe(200);
    // One queue per role of every loaded workflow.
    expect(queues.json.queues.map((q) => q.queue)).toEqual(expect.arrayContaining(['extract', 'synthesize', 'triage', 'merge']));
    expect(queues.json.queues.find((q) => q.queue === 'extract')!.counts).toEqual(expect.objectContaining({ waiting: expect.any(Number), active: expect.any(Number) }));
  });
});

describe('crash recovery: a frozen worker that comes back', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0, env: FAST_LIVENESS });
    await stack.startWorker({ WORKER_ID: 'frozen' });
    await stack.startWorker({ WORKER_ID: 'healthy' });
  });

  afterAll(async () => {
    if (stack?.workers[0]?.running) stack.workers[0].kill('SIGCONT');
    await stack?.stop();
  });

  it('refuses the late writes of a worker stopped past the stale threshold; nothing completes twice', async () => {
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 2_000 });
    const jobIds = await submitJobs(stack, 1, 4);
    const frozenTasks = await waitFor(
      'the frozen worker to be mid-step',
      async () => {
        const held = (await taskRows(stack, jobIds)).filter((t) => t.lease_owner === 'frozen' && t.status === 'running' && t.current_step === 1);
        return held.length > 0 ? held : undefined;
      },
      30_000,
      50,
    );
    const frozen = stack.workers[0]!;
    frozen.kill('SIGSTOP');
    // Another worker takes the task over and finishes the whole job while it is frozen.
    const statuses = await waitForJobs(stack, jobIds);
    expect([...statuses.values()][0]!.status).toBe('success');
    const finished = await taskRows(stack, jobIds);

    const linesBefore = frozen.output.length;
    frozen.kill('SIGCONT');
    // The frozen worker wakes up, finds its lease gone, and stops.
    await waitFor('the frozen worker to notice its lease is gone', async () =>
      logEvents(frozen.output.slice(linesBefore), 'lease lost: stopping work on this task').length >= frozenTasks.length ? true : undefined,
    );
    const after = await taskRows(stack, jobIds);
    expect(after).toEqual(finished);
    for (const task of frozenTasks) {
      const row = after.find((r) => r.task_id === task.task_id)!;
      expect(row).toMatchObject({ status: 'success', lease_owner: 'healthy' });
      expect(row.retry_count).toBeGreaterThanOrEqual(1);
    }
    const completions = stack.workers.flatMap((w) => logEvents(w.output, 'task completed')).map((e) => e.task_id as string);
    for (const row of after) expect(completions.filter((id) => id === row.task_id)).toHaveLength(1);
  });
});

describe('crash recovery: the retry limit', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0, env: { ...FAST_LIVENESS, TASK_MAX_ATTEMPTS: '1' } });
    await stack.startWorker({ WORKER_ID: 'doomed' });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('fails the task and its job with a clear reason once a stale task has no attempts left', async () => {
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 5_000 });
    const [jobId] = await submitJobs(stack, 1, 2);
    await waitFor('a task mid-step', async () => (await taskRows(stack, [jobId!])).find((t) => t.status === 'running' && t.current_step === 1), 30_000, 50);
    stack.workers[0]!.kill('SIGKILL');
    const statuses = await waitForJobs(stack, [jobId!], 30_000);
    expect(statuses.get(jobId!)!.status).toBe('failed');
    expect(statuses.get(jobId!)!.error).toMatch(/^task extract-\d failed: abandoned: no heartbeat from doomed .*retry limit reached/);
    const rows = await taskRows(stack, [jobId!]);
    // Both extracts were mid-step when the worker died: the sweeper fails the one it reaches
    // first (or both, in one sweep), and a failure cancels whatever else of the job is unfinished.
    const extracts = rows.filter((r) => r.role === 'extract');
    const failed = extracts.filter((r) => r.status === 'failed');
    expect(failed.length).toBeGreaterThanOrEqual(1);
    for (const row of failed) expect(row.error).toContain('retry limit reached');
    expect(extracts.every((r) => r.status === 'failed' || r.status === 'cancelled')).toBe(true);
    expect(rows.find((r) => r.role === 'synthesize')!.status).toBe('cancelled');
    // The tenant sees a stable code and which task failed; the worker's name and the timings stay in the database.
    const job = await stack.request<{ status: string; error: { code: string; message: string } }>('GET', `/v1/jobs/${jobId}`);
    expect(job.json).toMatchObject({ status: 'failed', error: { code: 'worker_lost', message: expect.stringMatching(/^task extract-\d failed: /) } });
    expect(job.json.error.message).not.toContain('doomed');
  });
});
