import { readFileSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { SIM_TARGETS, TestStack, type SimCall } from '../support/stack';

/**
 * Slow but working upstreams against the real processes (issue 13, items 12 and 13): a slow
 * moment must not turn into failed jobs. Probes are off, so the sim's call log holds only the
 * jobs' own calls.
 */
interface JobView {
  status: string;
  error?: { code: string; message: string };
  tasks: { role: string; status: string }[];
}

/** Starts the stack without workers, merges `tuning` into its router config, then starts one worker. */
async function startTuned(tuning: Record<string, unknown>, workerEnv: Record<string, string> = {}): Promise<TestStack> {
  const stack = await TestStack.start({ workers: 0 });
  const file = stack.sharedEnv.ROUTER_CONFIG!;
  const doc = parse(readFileSync(file, 'utf8')) as { router: Record<string, unknown> };
  Object.assign(doc.router, tuning);
  writeFileSync(file, stringify(doc));
  await stack.startWorker(workerEnv);
  return stack;
}

const docReview = (docs: number, tag: string) => ({
  type: 'doc_review',
  input: {
    question: `${tag}: what do these documents say?`,
    documents: Array.from({ length: docs }, (_, i) => ({ id: `${tag}-d${i}`, text: `${tag} document ${i}: the contract renews yearly on 1 March.` })),
  },
});

async function submit(stack: TestStack, body: unknown): Promise<string> {
  const res = await stack.request<{ job_id: string }>('POST', '/v1/jobs', body);
  expect(res.status).toBe(202);
  return res.json.job_id;
}

const targetNames = SIM_TARGETS.map((target) => target.name);

/** Small timeouts and backoff for test speed (as in the router fault drills); probes off. */
const FAST = {
  probes: { enabled: false },
  timeouts: { local_ms: 10_000, cloud_ms: 10_000, connect_ms: 5_000, first_token_local_ms: 1_000, first_token_cloud_ms: 1_000 },
  backoff: { base_ms: 50, max_ms: 200, jitter_ms: 20 },
  health: { retry_after_ms: 1_000 },
  breaker: { cooldown_ms: 1_000 },
  recovery: { switch_cooldown_ms: 0, hold_ms: 500 },
};

const BUDGET_WAIT = 'retry budget of the job spent: task waits for a trial call';

jest.setTimeout(180_000);

describe('slow upstreams (real supervisor, worker and llm-sim)', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('every target sends its headers only after 4 s (connect limit 3 s): two 20-document doc_review jobs succeed', async () => {
    // The shipped timeouts (connect 3 s, first token 15 s local / 30 s cloud); enough task
    // slots that the 40 extracts run in two rounds.
    stack = await startTuned({ probes: { enabled: false } }, { WORKER_CONCURRENCY: '20' });
    for (const target of targetNames) await stack.setSimMode(target, { mode: 'slow', delay_ms: 4_000 });
    const ids = [await submit(stack, docReview(20, 'slowa')), await submit(stack, docReview(20, 'slowb'))];
    for (const id of ids) {
      const done = await stack.waitForJob<JobView>(id, {}, 120_000);
      expect({ status: done.status, error: done.error }).toEqual({ status: 'success', error: undefined });
    }
    const calls: SimCall[] = await stack.simCalls();
    // One call per task (40 extracts, 2 syntheses): none was cut and retried.
    expect(calls).toHaveLength(42);
    expect(calls.every((call) => call.outcome === 'ok' && !call.client_gone)).toBe(true);
  });

  it('every target hangs for a moment: a 20-document doc_review job waits it out and succeeds, its retry budget spent', async () => {
    stack = await startTuned(FAST, { WORKER_CONCURRENCY: '20' });
    for (const target of targetNames) await stack.setSimMode(target, { mode: 'hang' });
    const id = await submit(stack, docReview(20, 'hang'));
    // The 20 extracts time out together and spend the job's budget (12 + 21): they wait.
    await stack.workers[0]!.waitForLine(new RegExp(BUDGET_WAIT), 60_000);
    expect((await stack.request<JobView>('GET', `/v1/jobs/${id}`)).json.status).toBe('running');
    for (const target of targetNames) await stack.setSimMode(target, { mode: 'ok' });
    const done = await stack.waitForJob<JobView>(id, {}, 120_000);
    expect({ status: done.status, error: done.error }).toEqual({ status: 'success', error: undefined });
    expect(done.tasks.filter((task) => task.role === 'extract' && task.status === 'success')).toHaveLength(20);
  });

  it('every target failing for good: once the budget is spent, each waiting task run makes at most one trial call, then the job fails saying so', async () => {
    stack = await startTuned({ ...FAST, retry_budget_per_job: 6, retry_budget_per_task: 0 }, { TARGET_WAIT_MAX_MS: '4000' });
    for (const target of targetNames) await stack.setSimMode(target, { mode: 'ratelimit', retry_after_s: 1 });
    const id = await submit(stack, docReview(1, 'storm'));
    const done = await stack.waitForJob<JobView>(id, {}, 90_000);
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('retry_budget_exhausted');
    const calls = await stack.simCalls();
    expect(calls.length).toBeGreaterThan(6);
    expect(calls.every((call) => call.status === 429)).toBe(true);
    // The budget (6, plus one attempt already under way when it ran out), then one trial per
    // run of the waiting task: every run that waited, and the last one that gave up.
    const waitingRuns = stack.workers[0]!.count(new RegExp(BUDGET_WAIT));
    expect(waitingRuns).toBeGreaterThan(0);
    expect(calls.length).toBeLessThanOrEqual(6 + 1 + waitingRuns + 1);
  });
});
