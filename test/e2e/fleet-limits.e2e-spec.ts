import { readFileSync, writeFileSync } from 'node:fs';
import IORedis from 'ioredis';
import { parse, stringify } from 'yaml';
import { waitFor } from '../support/processes';
import { TestStack } from '../support/stack';

/**
 * Fleet-wide limits against the real processes (issue 10): three workers and the supervisor
 * share one slow local target whose max_concurrency is 3. The sim counts its own open requests.
 */
interface SimTarget {
  name: string;
  in_flight: number;
  peak_concurrency: number;
}
interface JobView {
  status: string;
}

const SLOW = 'local_vllm_7b';

/** Every call goes to the one slow target; probes off, so the sim sees only the jobs' calls. */
function onlySlowTarget(yaml: string): string {
  const doc = parse(yaml) as { router: { targets: { name: string; max_concurrency: number }[]; [key: string]: unknown } };
  const slow = doc.router.targets.find((target) => target.name === SLOW)!;
  slow.max_concurrency = 3;
  doc.router.targets = [slow];
  doc.router.routes = [{ name: 'everything', when: { all_else: true }, target: SLOW }];
  doc.router.probes = { enabled: false };
  doc.router.fleet_limits = { slot_ttl_ms: 2_000, slot_wait_ms: 30_000, slot_poll_ms: 50 };
  return stringify(doc);
}

const docReview = (docs: number, tag: string) => ({
  type: 'doc_review',
  input: {
    question: `${tag}: what do these documents say?`,
    documents: Array.from({ length: docs }, (_, i) => ({ id: `${tag}-d${i}`, text: `${tag} document ${i}: the contract renews yearly.` })),
  },
});

jest.setTimeout(240_000);

describe('fleet-wide limits (real supervisor, three workers, llm-sim)', () => {
  let stack: TestStack | undefined;
  let redis: IORedis | undefined;
  afterEach(async () => {
    redis?.disconnect();
    await stack?.stop();
    stack = undefined;
  });

  it('a slow target with max_concurrency 3 never sees more than 3 requests while 40 tasks run; a killed worker’s slots come back within seconds', async () => {
    stack = await TestStack.start({ workers: 0 });
    const file = stack.sharedEnv.ROUTER_CONFIG!;
    writeFileSync(file, onlySlowTarget(readFileSync(file, 'utf8')));
    for (const id of ['w1', 'w2', 'w3']) await stack.startWorker({ WORKER_ID: id, WORKER_CONCURRENCY: '8' });
    await stack.setSimMode(SLOW, { mode: 'slow', delay_ms: 400 });
    redis = new IORedis(stack.sharedEnv.REDIS_URL!, { maxRetriesPerRequest: 1 });
    const slotsKey = `{${stack.prefix.replace(/[{}]/g, '')}:router-limits}:${SLOW}:slots`;

    const ids: string[] = [];
    for (const tag of ['fla', 'flb']) {
      const res = await stack.request<{ job_id: string }>('POST', '/v1/jobs', docReview(20, tag));
      expect(res.status).toBe(202);
      ids.push(res.json.job_id);
    }

    // Worker 2 holds a slot mid-run: kill it there.
    await waitFor('worker w2 to hold a slot on the slow target', async () => ((await redis!.zrange(slotsKey, '0', '-1')).some((h) => h.startsWith('worker:w2#')) ? true : undefined), 60_000, 20);
    stack.workers[1]!.kill('SIGKILL');
    await waitFor('the killed worker’s slots to lapse', async () => ((await redis!.zrange(slotsKey, '0', '-1')).some((h) => h.startsWith('worker:w2#')) ? undefined : true), 10_000, 50);
    // With w2's slots gone, the two live workers fill all three again.
    await waitFor(
      'the live workers to use all three slots',
      async () => {
        const holders = await redis!.zrange(slotsKey, '0', '-1');
        return holders.length === 3 && holders.every((h) => !h.startsWith('worker:w2#')) ? true : undefined;
      },
      20_000,
      20,
    );

    for (const id of ids) {
      const done = await stack.waitForJob<JobView>(id, {}, 180_000);
      expect(done.status).toBe('success');
    }
    const res = await fetch(`${stack.simControl}/targets`);
    const target = ((await res.json()) as { targets: SimTarget[] }).targets.find((t) => t.name === SLOW)!;
    expect(target.peak_concurrency).toBeLessThanOrEqual(3);
    expect(target.peak_concurrency).toBe(3);
    const calls = await stack.simCalls();
    expect(calls.length).toBeGreaterThanOrEqual(42);
  });
});
