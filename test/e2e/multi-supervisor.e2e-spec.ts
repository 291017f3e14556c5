/**
 * Drill: two supervisors on one database and one Redis, as behind any HTTP load balancer.
 * Both accept jobs and both sweep; a worker and then the first supervisor are killed with
 * SIGKILL mid-run. Every job succeeds, each stale task is taken over once, and the surviving
 * supervisor answers for jobs the dead one accepted (no sticky sessions).
 */
import { FAST_LIVENESS, documents, logEvents, taskRows, waitForJobs } from '../support/recovery-helpers';
import { waitFor } from '../support/processes';
import { TestStack } from '../support/stack';

jest.setTimeout(150_000);

async function submitTo(baseUrl: string, name: string): Promise<string> {
  const res = await fetch(`${baseUrl}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'doc_review', input: { question: 'When is payment due?', documents: documents(name, 3) } }),
  });
  const body = (await res.json()) as { job_id: string };
  if (res.status !== 202) throw new Error(`submit to ${baseUrl} failed: ${res.status} ${JSON.stringify(body)}`);
  return body.job_id;
}

describe('drill: two supervisors, one killed mid-run', () => {
  let stack: TestStack | undefined;

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0, env: FAST_LIVENESS });
    await stack.startSupervisor();
    await stack.startWorker({ WORKER_ID: 'victim' });
    await stack.startWorker({ WORKER_ID: 'survivor' });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('loses nothing and does nothing twice', async () => {
    const running = stack!;
    const [first, second] = [running.baseUrl, running.extraSupervisorUrls[0]!];
    await running.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 2_000 });
    const jobIds = [await submitTo(first, 'a1'), await submitTo(second, 'b1'), await submitTo(first, 'a2'), await submitTo(second, 'b2')];
    const victimTasks = await waitFor(
      'the victim to be mid-step',
      async () => {
        const held = (await taskRows(running, jobIds)).filter((t) => t.lease_owner === 'victim' && t.status === 'running' && t.current_step === 1);
        return held.length > 0 ? held : undefined;
      },
      30_000,
      50,
    );
    running.workers[0]!.kill('SIGKILL');
    running.supervisor.kill('SIGKILL');
    await Promise.all([running.workers[0]!.waitForExit(), running.supervisor.waitForExit()]);
    await running.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 200 });

    let statuses;
    try {
      statuses = await waitForJobs(running, jobIds, 90_000);
    } catch (error) {
      throw new Error(`${String(error)}\n${running.logs()}`, { cause: error });
    }
    expect([...statuses.values()].map((s) => s.status)).toEqual(['success', 'success', 'success', 'success']);

    // The survivor answers for every job, the dead supervisor's included.
    for (const jobId of jobIds) {
      const res = await fetch(`${second}/v1/jobs/${jobId}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { status: string }).status).toBe('success');
    }

    const rows = await taskRows(running, jobIds);
    const completions = running.workers.flatMap((w) => logEvents(w.output, 'task completed')).map((e) => e.task_id as string);
    for (const row of rows) expect(completions.filter((id) => id === row.task_id).length).toBeLessThanOrEqual(1);
    // Each stale task taken over exactly once: lease versions 1 (victim), 2 (the takeover), 3 (the survivor's claim).
    for (const before of victimTasks) {
      const after = rows.find((r) => r.task_id === before.task_id)!;
      expect({ task: after.task_id, status: after.status, retry_count: after.retry_count, lease_version: after.lease_version, owner: after.lease_owner }).toEqual({
        task: before.task_id,
        status: 'success',
        retry_count: 1,
        lease_version: 3,
        owner: 'survivor',
      });
    }
    const takeovers = [running.supervisor, ...running.extraSupervisors].flatMap((s) => logEvents(s.output, 'stale task taken over; enqueued to resume'));
    expect(new Set(takeovers.map((e) => e.task_id)).size).toBe(takeovers.length);
    for (const before of victimTasks) expect(takeovers.filter((e) => e.task_id === before.task_id)).toHaveLength(1);
  });
});
