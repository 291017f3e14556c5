/**
 * The cost ledger under a worker's kill -9: every upstream attempt the sim saw has its row,
 * the paid ones with their cost, and the attempts cut off by the kill are in the ledger as
 * what they were (`abandoned`). The sim is slowed so that calls are in flight at the kill,
 * the cloud call of a synthesize step among them.
 */
import { FAST_LIVENESS, submitJobs, taskRows, waitForJobs } from '../support/recovery-helpers';
import { waitFor } from '../support/processes';
import { TestStack, type SimCall } from '../support/stack';

jest.setTimeout(150_000);

const ADMIN_TOKEN = 'e2e-ledger-fault-admin-token-01';

interface LedgerRowJson {
  target: string;
  outcome: string;
  cost_usd: number;
  task_id: string;
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

describe('cost ledger: a worker killed mid-run', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0, env: { ...FAST_LIVENESS, ADMIN_TOKEN } });
    // The survivor starts after the kill: with both running, every synthesize task could go to
    // the survivor, and the victim would never be seen in a cloud call.
    await stack.startWorker({ WORKER_ID: 'victim' });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  const ledgerRows = async (jobIds: string[]) =>
    (
      await stack.db.pool.query<LedgerRowJson>(
        'select target, outcome, cost_usd, task_id from model_call_ledger where job_id = any($1::uuid[]) order by id',
        [jobIds],
      )
    ).rows;

  it('has one ledger row per upstream attempt the sim saw, each paid answer with its cost', async () => {
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 600 });
    await stack.setSimMode('cloud_main', { mode: 'slow', delay_ms: 2_500 });
    const jobIds = await submitJobs(stack, 4, 3);

    // Kill the victim while it waits for the cloud answer of a synthesize step.
    await waitFor(
      'the victim to be in a cloud call',
      async () => {
        const held = (await taskRows(stack, jobIds)).filter((t) => t.lease_owner === 'victim' && t.role === 'synthesize' && t.status === 'running' && t.current_step === 1);
        if (held.length === 0) return undefined;
        const calls = await stack.simCalls();
        return held.some((t) => calls.some((c) => c.target === 'cloud_main' && c.headers['x-switchyard-task'] === t.task_id)) ? true : undefined;
      },
      60_000,
      50,
    );
    stack.workers[0]!.kill('SIGKILL');
    await stack.workers[0]!.waitForExit();
    await stack.startWorker({ WORKER_ID: 'survivor' });
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 100 });
    await stack.setSimMode('cloud_main', { mode: 'slow', delay_ms: 100 });

    const statuses = await waitForJobs(stack, jobIds);
    expect([...statuses.values()].map((s) => s.status)).toEqual(['success', 'success', 'success', 'success']);

    const tasks = new Set((await taskRows(stack, jobIds)).map((t) => t.task_id));
    const attempts: SimCall[] = (await stack.simCalls()).filter((c) => tasks.has(c.headers['x-switchyard-task'] ?? ''));
    const expected = countBy(attempts, (c) => c.target);
    // Rows written in the background (the buffered ledger) get a few seconds to land; a lost row never does.
    const rows = await waitFor(
      'the ledger to hold a row per attempt',
      async () => {
        const found = await ledgerRows(jobIds);
        return found.length >= attempts.length ? found : undefined;
      },
      5_000,
      100,
    ).catch(() => ledgerRows(jobIds));

    expect({ rows: countBy(rows, (r) => r.target), total: rows.length }).toEqual({ rows: expected, total: attempts.length });
    // The kill cut calls off: they are in the ledger as abandoned, and none is left in flight.
    expect(attempts.some((c) => c.client_gone)).toBe(true);
    expect(rows.filter((r) => r.outcome === 'abandoned').length).toBeGreaterThan(0);
    expect(rows.filter((r) => r.outcome === 'in_flight')).toEqual([]);
    // Every answer the sim delivered is a paid `ok` row, with its cost.
    const delivered = attempts.filter((c) => c.outcome === 'ok' && c.status === 200 && !c.client_gone);
    const paid = rows.filter((r) => r.outcome === 'ok');
    expect(countBy(paid, (r) => r.target)).toEqual(countBy(delivered, (c) => c.target));
    expect(paid.filter((r) => !(r.cost_usd > 0))).toEqual([]);

    // /admin/costs counts the same attempts.
    const costs = await stack.request<{ totals: { calls: number } }>('GET', '/admin/costs?group_by=target&tenant=dev', undefined, {
      authorization: `Bearer ${ADMIN_TOKEN}`,
    });
    expect(costs.status).toBe(200);
    expect(costs.json.totals.calls).toBe(attempts.length);
  });
});
