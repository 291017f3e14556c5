import { waitFor } from '../support/processes';
import { TestStack, type SimCall } from '../support/stack';

/**
 * Operator overrides are fleet-wide: a drain through the supervisor's admin API reaches the
 * worker's router (Redis hash + channel), and GET /admin/targets shows every process's view.
 */
const ADMIN_TOKEN = 'admin-token-for-router-admin-e2e';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

interface FleetEntry {
  processId: string;
  role: 'supervisor' | 'worker';
  ageMs: number;
  drained: boolean;
  forcedPrimary: boolean;
  breaker: string;
  score: number;
}
interface TargetJson {
  name: string;
  state: string;
  breaker: string;
  score: number;
  share: number;
  inFlight: number;
  latencyMs: { p50: number | null; p95: number | null };
  errorRate: number;
  drained: boolean;
  fleet: {
    processes: FleetEntry[];
    aggregate: { processes: number; minScore: number | null; anyBreakerOpen: boolean; totalInFlight: number; worstErrorRate: number; drainedIn: number };
  } | null;
}
interface TargetsJson {
  targets: TargetJson[];
  fleet: { self: string; processes: { processId: string; role: string; ageMs: number }[] } | null;
}
interface JobJson {
  job_id: string;
  status: string;
  tasks: { task_id: string; role: string; status: string }[];
}

const documents = [
  { id: 'doc-a', text: 'The invoice is due within 30 days of delivery.' },
  { id: 'doc-b', text: 'Disputes go to arbitration in Zurich.' },
];

describe('router admin across the fleet (real supervisor, worker, llm-sim, Redis)', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 1, env: { ADMIN_TOKEN } });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  const targets = async () => {
    const res = await stack.request<TargetsJson>('GET', '/admin/targets', undefined, ADMIN);
    expect(res.status).toBe(200);
    return res.json;
  };
  /** waitFor, with every process's recent output in the message when it times out. */
  const waitForFleet = async <T>(what: string, check: () => Promise<T | undefined>): Promise<T> => {
    try {
      return await waitFor(what, check);
    } catch (error) {
      throw new Error(`${String(error)}\nlast GET /admin/targets: ${JSON.stringify(await targets().catch(() => null))}\n${stack.logs()}`, { cause: error });
    }
  };
  const workerView = (json: TargetsJson, target: string) => json.targets.find((t) => t.name === target)?.fleet?.processes.find((p) => p.role === 'worker');

  async function extractCalls(): Promise<SimCall[]> {
    const submitted = await stack.request<{ job_id: string }>('POST', '/v1/jobs', { type: 'doc_review', input: { question: 'What are the terms?', documents } });
    expect(submitted.status).toBe(202);
    const job = await stack.waitForJob<JobJson>(submitted.json.job_id);
    expect(job.status).toBe('success');
    const extractIds = new Set(job.tasks.filter((t) => t.role === 'extract').map((t) => t.task_id));
    expect(extractIds.size).toBe(documents.length);
    const calls = (await stack.simCalls()).filter((c) => extractIds.has(c.headers['x-switchyard-task'] ?? ''));
    expect(calls.length).toBeGreaterThanOrEqual(documents.length);
    return calls;
  }

  it('GET /admin/targets shows the worker in the fleet, with an aggregate per target', async () => {
    const json = await waitForFleet('the worker to report its router snapshot', async () => {
      const current = await targets();
      return workerView(current, 'local_vllm_7b') ? current : undefined;
    });
    const seven = json.targets.find((t) => t.name === 'local_vllm_7b')!;
    // The supervisor's own fields are still there.
    expect(seven).toMatchObject({ state: expect.any(String), breaker: 'closed', score: expect.any(Number), share: expect.any(Number), inFlight: expect.any(Number) });
    const roles = seven.fleet!.processes.map((p) => p.role).sort();
    expect(roles).toEqual(['supervisor', 'worker']);
    expect(workerView(json, 'local_vllm_7b')!.ageMs).toEqual(expect.any(Number));
    expect(seven.fleet!.aggregate).toMatchObject({ processes: 2, minScore: expect.any(Number), anyBreakerOpen: false, totalInFlight: expect.any(Number), worstErrorRate: expect.any(Number) });
    expect(json.fleet!.processes.map((p) => p.role).sort()).toEqual(['supervisor', 'worker']);
    expect((await stack.request('GET', '/admin/targets')).status).toBe(401);
  });

  it('a drain through the admin API moves the worker’s extract calls elsewhere; enable brings them back', async () => {
    // Before: non-sensitive extract goes to the local 7B.
    expect(new Set((await extractCalls()).map((c) => c.target))).toEqual(new Set(['local_vllm_7b']));

    const drained = await stack.request<TargetJson>('POST', '/admin/targets/local_vllm_7b/drain', undefined, ADMIN);
    expect(drained.status).toBe(200);
    expect(drained.json.drained).toBe(true);
    await waitForFleet('the worker to report local_vllm_7b drained', async () => workerView(await targets(), 'local_vllm_7b')?.drained === true || undefined);

    const whileDrained = await extractCalls();
    expect(whileDrained.some((c) => c.target === 'local_vllm_7b')).toBe(false);

    const enabled = await stack.request<TargetJson>('POST', '/admin/targets/local_vllm_7b/enable', undefined, ADMIN);
    expect(enabled.status).toBe(200);
    expect(enabled.json.drained).toBe(false);
    await waitForFleet('the worker to report local_vllm_7b enabled', async () => workerView(await targets(), 'local_vllm_7b')?.drained === false || undefined);

    expect(new Set((await extractCalls()).map((c) => c.target))).toEqual(new Set(['local_vllm_7b']));
  }, 180_000);

  it('force-primary reaches the worker, and an unknown target is a 404 that changes nothing', async () => {
    expect((await stack.request('POST', '/admin/targets/no_such_target/drain', undefined, ADMIN)).status).toBe(404);
    expect((await stack.request('POST', '/admin/routing/force-primary', { target: 'no_such_target' }, ADMIN)).status).toBe(404);

    expect((await stack.request('POST', '/admin/routing/force-primary', { target: 'local_vllm_32b' }, ADMIN)).status).toBe(200);
    await waitForFleet('the worker to report the forced primary', async () => workerView(await targets(), 'local_vllm_32b')?.forcedPrimary === true || undefined);
    expect(new Set((await extractCalls()).map((c) => c.target))).toEqual(new Set(['local_vllm_32b']));

    expect((await stack.request('POST', '/admin/routing/force-primary', { target: null }, ADMIN)).status).toBe(200);
    await waitForFleet('the worker to clear the forced primary', async () => workerView(await targets(), 'local_vllm_32b')?.forcedPrimary === false || undefined);
    const json = await targets();
    for (const target of json.targets) expect(target.fleet!.aggregate.drainedIn).toBe(0);
  }, 180_000);
});
