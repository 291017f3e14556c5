/**
 * Drill: Redis through Sentinel (a primary, a replica, three sentinels of this test's own).
 * The primary is killed with SIGKILL while jobs run; the sentinels promote the replica, every
 * connection of every process follows it, and every job finishes with no task completed twice.
 * The failover time printed is the drill's view: kill → first successful write through the
 * platform's own connection factory.
 */
import { performance } from 'node:perf_hooks';
import { ConfigError, loadConfig } from '@switchyard/config';
import { checkRedisTopology, connectRedis, withDeadline } from '@switchyard/platform';
import { PrivateSentinelSet } from '../support/ha-services';
import { FAST_LIVENESS, logEvents, submitJobs, taskRows, waitForJobs } from '../support/recovery-helpers';
import { waitFor } from '../support/processes';
import { TestStack } from '../support/stack';

jest.setTimeout(150_000);

describe('drill: Redis Sentinel failover mid-run', () => {
  let sentinels: PrivateSentinelSet | undefined;
  let stack: TestStack | undefined;

  beforeAll(async () => {
    sentinels = await PrivateSentinelSet.start();
    stack = await TestStack.start({ workers: 0, env: { ...FAST_LIVENESS, ...sentinels.env } });
    await stack.startWorker({ WORKER_ID: 'worker-a' });
    await stack.startWorker({ WORKER_ID: 'worker-b' });
  });

  afterAll(async () => {
    await stack?.stop();
    await sentinels?.stop();
  });

  it('at start, names REDIS_SENTINEL_MASTER when the sentinels answer but know no such master', async () => {
    await expect(checkRedisTopology(loadConfig(sentinels!.env))).resolves.toBeUndefined();
    const unknown = checkRedisTopology(loadConfig({ ...sentinels!.env, REDIS_SENTINEL_MASTER: 'orders' }));
    await expect(unknown).rejects.toThrow(ConfigError);
    await expect(unknown).rejects.toThrow(/REDIS_SENTINEL_MASTER: no sentinel at .* knows a master named "orders"/);
  });

  it('follows the promoted replica: every job succeeds, no task completes twice', async () => {
    const set = sentinels!;
    const running = stack!;
    await running.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 1_000 });
    const jobIds = await submitJobs(running, 3, 3);
    await waitFor('tasks mid-step', async () => ((await taskRows(running, jobIds)).some((t) => t.status === 'running' && t.current_step === 1) ? true : undefined), 30_000, 50);

    const probe = connectRedis(loadConfig(set.env), 'switchyard-drill-probe');
    // Connection errors while no primary is known are expected here; the write below says whether it recovered.
    probe.on('error', () => undefined);
    try {
      await probe.set(`${running.prefix}:drill-probe`, 'before');
      const killedAt = performance.now();
      const killedPort = await set.killPrimary();
      // Commands wait in the offline queue while no primary is known; this resolves on the first write the promoted replica takes.
      await withDeadline(probe.set(`${running.prefix}:drill-probe`, 'after'), 30_000, 'a write after the failover');
      const failoverMs = Math.round(performance.now() - killedAt);
      console.log(`sentinel failover: kill -9 of the primary -> first successful write ${failoverMs} ms`);
      expect(await set.primaryPort()).not.toBe(killedPort);
    } finally {
      probe.disconnect();
    }
    await running.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 100 });

    let statuses;
    try {
      statuses = await waitForJobs(running, jobIds, 90_000);
    } catch (error) {
      throw new Error(`${String(error)}\n${running.logs()}\n${set.logs()}`, { cause: error });
    }
    expect([...statuses.values()].map((s) => s.status)).toEqual(['success', 'success', 'success']);
    const rows = await taskRows(running, jobIds);
    expect(rows.every((r) => r.status === 'success')).toBe(true);
    const completions = running.workers.flatMap((w) => logEvents(w.output, 'task completed')).map((e) => e.task_id as string);
    for (const row of rows) expect(completions.filter((id) => id === row.task_id).length).toBeLessThanOrEqual(1);
  });
});
