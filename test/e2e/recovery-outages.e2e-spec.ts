/**
 * Outages of the two stores, with the real processes: Redis restarting empty mid-run (every
 * queue entry, flow and lock gone) and Postgres restarting mid-run. Each test runs its own
 * private redis-server / Postgres cluster on a free port: the shared ones are never touched.
 */
import { PrivatePostgres, PrivateRedis } from '../support/private-services';
import { FAST_LIVENESS, submitJobs, taskRows, waitForJobs } from '../support/recovery-helpers';
import { waitFor } from '../support/processes';
import { TestStack } from '../support/stack';

// Stacks of several real processes, and recoveries that take seconds: well above the default 5 s.
jest.setTimeout(150_000);

describe('Redis restarts empty mid-run', () => {
  let redis: PrivateRedis;
  let stack: TestStack;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    stack = await TestStack.start({ workers: 2, redisUrl: redis.url, env: FAST_LIVENESS });
  });

  afterAll(async () => {
    await stack?.stop();
    await redis?.stop();
  });

  it('finishes every job, rebuilt from Postgres', async () => {
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 1_000 });
    // More extracts than the two workers take at once (2 x 8), so some are still in their queue when Redis
    // dies. Only extracts count: a synthesize is pending long before it is ever enqueued.
    const jobIds = await submitJobs(stack, 2, 20);
    await waitFor(
      'some extracts done and some still waiting in their queue',
      async () => {
        const extracts = (await taskRows(stack, jobIds)).filter((r) => r.role === 'extract');
        return extracts.some((r) => r.status === 'success') && extracts.some((r) => r.status === 'pending') ? true : undefined;
      },
      30_000,
      50,
    );
    await redis.restartEmpty();

    const statuses = await waitForJobs(stack, jobIds, 100_000);
    expect([...statuses.values()].map((s) => s.status)).toEqual(['success', 'success']);
    for (const row of await taskRows(stack, jobIds)) {
      expect(row.status).toBe('success');
      expect(row.step_checkpoints.map((c) => c.step)).toEqual([0, 1]);
    }
    const reconciled = [stack.supervisor].flatMap((s) => s.output).filter((l) => l.includes('pending task had no runnable queue job'));
    expect(reconciled.length).toBeGreaterThan(0);
  });
});

describe('Postgres restarts mid-run', () => {
  let postgres: PrivatePostgres;
  let stack: TestStack;

  beforeAll(async () => {
    postgres = await PrivatePostgres.start();
    stack = await TestStack.start({ workers: 2, databaseBaseUrl: postgres.baseUrl, env: FAST_LIVENESS });
  });

  afterAll(async () => {
    await stack?.stop();
    await postgres?.destroy();
  });

  it('finishes every job; no process crashes', async () => {
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 1_000 });
    const jobIds = await submitJobs(stack, 2, 6);
    await waitFor(
      'tasks mid-flight',
      async () => ((await taskRows(stack, jobIds)).some((r) => r.status === 'running') ? true : undefined),
      30_000,
      50,
    );
    postgres.stopServer();
    // Down until the processes feel it: heartbeats and sweeps fail meanwhile, and readiness says so
    // (on a loaded machine every task may have finished before the stop, leaving no heartbeat to fail).
    await waitFor('the outage to be felt', async () => {
      const logged = [stack.supervisor, ...stack.workers].some((p) => p.output.some((l) => l.includes('heartbeat write failed') || l.includes('sweep failed')));
      if (logged) return true;
      const ready = await stack.request('GET', '/readyz').catch(() => undefined);
      return ready?.status === 503 ? true : undefined;
    });
    await postgres.startServer();

    const statuses = await waitForJobs(stack, jobIds, 100_000);
    expect([...statuses.values()].map((s) => s.status)).toEqual(['success', 'success']);
    for (const row of await taskRows(stack, jobIds)) expect(row.step_checkpoints.map((c) => c.step)).toEqual([0, 1]);
    const exited = [stack.supervisor, ...stack.workers].filter((p) => !p.running);
    expect(exited.map((p) => `${p.name}:\n${p.tail(30)}`)).toEqual([]);
  });
});
