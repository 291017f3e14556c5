import { readFileSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { TestStack } from '../support/stack';

/**
 * Shared breakers against the real processes (issue 10): one worker runs the extracts, another
 * the synthesis. The extract worker's failures open the local target's breaker; the other
 * worker's first call then goes elsewhere without ever trying that target.
 */
interface JobView {
  status: string;
  tasks: { task_id: string; role: string }[];
}

const FAILING = 'local_vllm_7b';
const HEALTHY = 'cloud_main';

function breakerAfterThree(yaml: string): string {
  const doc = parse(yaml) as { router: Record<string, unknown> };
  doc.router.routes = [{ name: 'everything', when: { all_else: true }, targets: [FAILING, HEALTHY] }];
  doc.router.probes = { enabled: false };
  doc.router.breaker = { consecutive_failures: 3, cooldown_ms: 120_000 };
  doc.router.backoff = { base_ms: 20, max_ms: 50, jitter_ms: 5 };
  return stringify(doc);
}

jest.setTimeout(180_000);

describe('breakers shared by the fleet (real supervisor, two workers, llm-sim)', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('a breaker opened in one worker is seen by another worker’s next call, which never calls the failing target', async () => {
    stack = await TestStack.start({ workers: 0 });
    const file = stack.sharedEnv.ROUTER_CONFIG!;
    writeFileSync(file, breakerAfterThree(readFileSync(file, 'utf8')));
    await stack.startWorker({ WORKER_ID: 'extractor', WORKER_QUEUES: 'extract' });
    await stack.startWorker({ WORKER_ID: 'synthesizer', WORKER_QUEUES: 'synthesize' });
    await stack.setSimMode(FAILING, { mode: 'error' });

    const res = await stack.request<{ job_id: string }>('POST', '/v1/jobs', {
      type: 'doc_review',
      input: { question: 'q?', documents: Array.from({ length: 4 }, (_, i) => ({ id: `b${i}`, text: `document ${i}` })) },
    });
    expect(res.status).toBe(202);
    const done = await stack.waitForJob<JobView>(res.json.job_id, {}, 120_000);
    expect(done.status).toBe('success');

    const synthesis = done.tasks.find((task) => task.role === 'synthesize')!;
    const calls = await stack.simCalls();
    const extractCallsToFailing = calls.filter((call) => call.target === FAILING && call.headers['x-switchyard-task'] !== synthesis.task_id);
    expect(extractCallsToFailing.length).toBeGreaterThanOrEqual(3);
    const synthesisCalls = calls.filter((call) => call.headers['x-switchyard-task'] === synthesis.task_id);
    expect(synthesisCalls.length).toBeGreaterThan(0);
    expect(synthesisCalls.map((call) => call.target)).toEqual(synthesisCalls.map(() => HEALTHY));
  });
});
