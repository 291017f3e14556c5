import { readFileSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { waitFor } from '../support/processes';
import { TestStack, type SimCall } from '../support/stack';

/**
 * Fault drills against the real processes: llm-sim's fault modes per target, the shipped
 * routes, and a router config tuned for test speed (small timeouts and backoff, probes off
 * so the sim's call log holds only real traffic).
 */
interface JobView {
  status: string;
  error?: { code: string; message: string };
  tasks: { role: string; status: string; route_targets: { target: string; outcome: string; error?: string }[] }[];
}

const TUNING = {
  probes: { enabled: false },
  timeouts: { local_ms: 10_000, cloud_ms: 10_000, connect_ms: 5_000, first_token_local_ms: 1_000, first_token_cloud_ms: 1_000 },
  backoff: { base_ms: 50, max_ms: 200, jitter_ms: 20 },
  health: { retry_after_ms: 3_000 },
  recovery: { switch_cooldown_ms: 0, hold_ms: 500 },
};

/** Starts the stack without workers, tunes its router config, then starts the workers on it. */
async function startTuned(workers = 1, tuning: Record<string, unknown> = TUNING): Promise<TestStack> {
  const stack = await TestStack.start({ workers: 0 });
  const file = stack.sharedEnv.ROUTER_CONFIG!;
  const doc = parse(readFileSync(file, 'utf8')) as { router: Record<string, unknown> };
  Object.assign(doc.router, tuning);
  writeFileSync(file, stringify(doc));
  for (let i = 0; i < workers; i++) await stack.startWorker();
  return stack;
}

const job = (docs: number, tag: string, meta: Record<string, unknown> = {}) => ({
  type: 'doc_review',
  input: {
    question: `${tag}: what do these documents say?`,
    documents: Array.from({ length: docs }, (_, i) => ({ id: `${tag}-d${i}`, text: `${tag} document ${i}: the contract renews yearly on 1 March.` })),
  },
  meta,
});

async function submit(stack: TestStack, body: unknown): Promise<string> {
  const res = await stack.request<{ job_id: string }>('POST', '/v1/jobs', body);
  expect(res.status).toBe(202);
  return res.json.job_id;
}

const count = (calls: SimCall[], target: string) => calls.filter((c) => c.target === target).length;

jest.setTimeout(180_000);

describe('router fault drills (real supervisor, worker and llm-sim)', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('local 7B failing with 500s: every job succeeds, and the failing target is left alone after a few calls', async () => {
    stack = await startTuned();
    await stack.setSimMode('local_vllm_7b', { mode: 'error' });
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await submit(stack, job(4, `err${i}`)));
    for (const id of ids) {
      const done = await stack.waitForJob<JobView>(id, {}, 90_000);
      expect(done.status).toBe('success');
    }
    const calls = await stack.simCalls();
    // 16 extract calls would go to the 7B; health (3 consecutive server errors → score 0) stops that
    // within a few calls, the concurrent ones in flight included.
    expect(count(calls, 'local_vllm_7b')).toBeLessThanOrEqual(10);
    expect(count(calls, 'local_vllm_32b') + count(calls, 'cloud_main')).toBeGreaterThanOrEqual(16);
  });

  it('both local targets down: a sensitive job waits, never reaches the cloud, and finishes once a local target returns', async () => {
    stack = await startTuned();
    await stack.setSimMode('local_vllm_7b', { mode: 'down' });
    await stack.setSimMode('local_vllm_32b', { mode: 'down' });
    const id = await submit(stack, job(2, 'sens', { sensitivity: 'sensitive' }));
    const s = stack;
    await s.workers[0]!.waitForLine(/no eligible model target: task waits/, 30_000);
    expect((await s.request<JobView>('GET', `/v1/jobs/${id}`)).json.status).not.toBe('failed');
    await s.setSimMode('local_vllm_32b', { mode: 'ok' });
    const done = await s.waitForJob<JobView>(id, {}, 90_000);
    expect(done.status).toBe('success');
    const calls = await s.simCalls();
    expect(count(calls, 'cloud_main')).toBe(0);
    expect(count(calls, 'local_vllm_32b')).toBeGreaterThan(0);
  });

  it('a hanging target: the first-token timeout moves the work on', async () => {
    stack = await startTuned();
    await stack.setSimMode('local_vllm_7b', { mode: 'hang' });
    const id = await submit(stack, job(2, 'hang'));
    const done = await stack.waitForJob<JobView>(id, {}, 90_000);
    expect(done.status).toBe('success');
    const routes = done.tasks.flatMap((t) => t.route_targets);
    const timedOut = routes.filter((r) => r.target === 'local_vllm_7b' && r.outcome === 'error');
    expect(timedOut.length).toBeGreaterThan(0);
    expect(timedOut[0]!.error).toBe('timeout');
    expect(routes.some((r) => r.target !== 'local_vllm_7b' && r.outcome === 'ok')).toBe(true);
  });

  it('garbage output: counted as bad output of that target, and the work moves on', async () => {
    stack = await startTuned();
    await stack.setSimMode('local_vllm_7b', { mode: 'garbage' });
    const id = await submit(stack, job(2, 'garb'));
    const done = await stack.waitForJob<JobView>(id, {}, 90_000);
    expect(done.status).toBe('success');
    const extracts = done.tasks.filter((t) => t.role === 'extract');
    for (const task of extracts) {
      expect(task.route_targets).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ target: 'local_vllm_7b', outcome: 'bad_output' }),
          expect.objectContaining({ outcome: 'ok' }),
        ]),
      );
      expect(task.route_targets.at(-1)!.target).not.toBe('local_vllm_7b');
    }
    // The router itself judged the JSON-mode reply: the ledger row says bad_output.
    const s = stack;
    const rows = await waitFor('bad_output ledger rows', async () => {
      const result = await s.db.pool.query<{ n: number }>(`select count(*)::int as n from model_call_ledger where target = 'local_vllm_7b' and outcome = 'bad_output'`);
      return result.rows[0]!.n >= 2 ? result.rows[0]!.n : undefined;
    });
    expect(rows).toBeGreaterThanOrEqual(2);
  });
});
