/**
 * Drill: Redis Cluster (three masters of this test's own, no replicas). The doc_review and
 * gateway e2e specs run unchanged with every process on `REDIS_CLUSTER_NODES`; then the
 * master holding the queues is killed and started again empty while jobs run: Postgres is
 * the record, the sweeper re-enqueues what Redis lost, and every job succeeds.
 */
import { hashSlotOf, taggedFeaturePrefix } from '@switchyard/platform';
import { FAST_LIVENESS, logEvents, submitJobs, taskRows, waitForJobs } from '../support/recovery-helpers';
import { waitFor } from '../support/processes';
import { TestStack, useTopologyForNewStacks } from '../support/stack';
// The existing end-to-end specs, unchanged, run again here on this topology.
import './doc-review.e2e-spec';
import './gateway.e2e-spec';

jest.setTimeout(150_000);

// Set while the modules load, read when their hooks start stacks: every stack from here on has a cluster of its own.
useTopologyForNewStacks('cluster');

describe('drill: Redis Cluster, the queues master restarted empty mid-run', () => {
  let stack: TestStack | undefined;

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0, env: FAST_LIVENESS });
    await stack.startWorker({ WORKER_ID: 'worker-a' });
    await stack.startWorker({ WORKER_ID: 'worker-b' });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('keeps the router keys off the queues slot, and every job succeeds after the queues master comes back empty', async () => {
    const running = stack!;
    const cluster = running.owned.cluster!;
    await running.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 1_000 });
    const jobIds = await submitJobs(running, 3, 3);
    await waitFor('tasks mid-step', async () => ((await taskRows(running, jobIds)).some((t) => t.status === 'running' && t.current_step === 1) ? true : undefined), 30_000, 50);
    // The router's fleet snapshots have a hash tag of their own: another slot than the queues' (which
    // master serves it depends on the random prefix, so only the slot is asserted).
    expect(hashSlotOf(`${taggedFeaturePrefix(running.prefix, 'router-fleet')}snapshots`)).not.toBe(hashSlotOf(`${running.prefix}:extract:wait`));
    await waitFor('the fleet snapshots written through the cluster', async () => ((await cluster.keysPerNode()).reduce((a, b) => a + b, 0) > 0 ? true : undefined), 30_000);
    await cluster.restartEmpty(await cluster.portOfKey(`${running.prefix}:extract:wait`));
    await running.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 100 });

    let statuses;
    try {
      statuses = await waitForJobs(running, jobIds, 90_000);
    } catch (error) {
      throw new Error(`${String(error)}\n${running.logs()}`, { cause: error });
    }
    expect([...statuses.values()].map((s) => s.status)).toEqual(['success', 'success', 'success']);
    const rows = await taskRows(running, jobIds);
    expect(rows.every((r) => r.status === 'success')).toBe(true);
    const completions = running.workers.flatMap((w) => logEvents(w.output, 'task completed')).map((e) => e.task_id as string);
    for (const row of rows) expect(completions.filter((id) => id === row.task_id).length).toBeLessThanOrEqual(1);
  });
});
