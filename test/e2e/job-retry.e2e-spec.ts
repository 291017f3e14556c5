import { waitFor } from '@switchyard/devkit';
import { TestStack, type SimCall } from '../support/stack';

interface TaskJson {
  task_id: string;
  role: string;
  status: string;
  retry_count: number;
  current_step: number;
  total_steps: number;
}
interface JobJson {
  job_id: string;
  status: string;
  result?: Record<string, unknown>;
  tasks: TaskJson[];
}

const documents = [
  { id: 'msa', text: 'Payment is due within 30 days of the invoice date.' },
  { id: 'sow', text: 'Either party may terminate with 60 days written notice.' },
];

const ALPHA = { authorization: 'Bearer alpha-key-0001' };
const BETA = { authorization: 'Bearer beta-key-00002' };

const callsOf = (calls: SimCall[], taskId: string) => calls.filter((c) => c.headers['x-switchyard-task'] === taskId);

/**
 * POST /v1/jobs/:id/retry on the real processes: a job that stopped (failed, or cancelled) runs
 * its unfinished tasks again from their checkpoints; its finished tasks are kept and the
 * simulator sees no second call for them.
 */
describe('job retry end to end (real supervisor, worker and llm-sim processes)', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({
      workers: 1,
      apiKeys: 'alpha:alpha-key-0001,beta:beta-key-00002',
      env: { TARGET_WAIT_MAX_MS: '1500' },
      // extract goes to local_vllm_7b; synthesize (reasoning, high) to cloud_main, else local_vllm_32b
      // (the all_else route) and nowhere else: with both down it fails after a short wait. A target
      // back up gets its trial call half a second after its last failure.
      editRouterConfig: (yaml) =>
        yaml
          .replace('fallback_to_any_eligible: true', 'fallback_to_any_eligible: false')
          .replace('retry_after_ms: 30000', 'retry_after_ms: 500')
          .replace('when: { all_else: true }\n      target: local_vllm_7b', 'when: { all_else: true }\n      target: local_vllm_32b')
          .replace('  routes:\n', '  routes:\n    - name: light_work\n      when: { task_type: [extract] }\n      target: local_vllm_7b\n      priority: 120\n'),
    });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  const request = <T = unknown>(method: string, path: string, body?: unknown) => stack.request<T>(method, path, body, ALPHA);
  const waitForJob = (jobId: string) => stack.waitForJob<JobJson>(jobId, ALPHA, 90_000);

  async function submit(): Promise<string> {
    const submitted = await request<{ job_id: string }>('POST', '/v1/jobs', { type: 'doc_review', input: { question: 'What are the terms?', documents } });
    expect(submitted.status).toBe(202);
    return submitted.json.job_id;
  }

  it('a job failed while its only target was down succeeds when retried after recovery, without calling its finished tasks again', async () => {
    await stack.setSimMode('cloud_main', { mode: 'down' });
    await stack.setSimMode('local_vllm_32b', { mode: 'down' });
    const jobId = await submit();
    const failed = await waitForJob(jobId);
    expect(failed.status).toBe('failed');
    const extracts = failed.tasks.filter((t) => t.role === 'extract');
    expect(extracts.map((t) => t.status)).toEqual(['success', 'success']);
    const before = await stack.simCalls();
    const extractCalls = extracts.map((task) => callsOf(before, task.task_id).length);
    expect(extractCalls.every((n) => n >= 1)).toBe(true);

    await stack.setSimMode('cloud_main', { mode: 'ok' });
    await stack.setSimMode('local_vllm_32b', { mode: 'ok' });
    const retried = await request<{ job_id: string; status: string }>('POST', `/v1/jobs/${jobId}/retry`);
    expect(retried.status).toBe(202);
    // The job's real status: a worker may already have claimed its first task by the time the route reads it.
    expect(['queued', 'pending', 'running']).toContain(retried.json.status);
    const job = await waitForJob(jobId);
    expect(job.status).toBe('success');
    expect(job.result).toMatchObject({ synthesis: expect.anything() });
    const after = await stack.simCalls();
    expect(extracts.map((task) => callsOf(after, task.task_id).length)).toEqual(extractCalls);
    const synthesize = job.tasks.find((t) => t.role === 'synthesize')!;
    expect(callsOf(after, synthesize.task_id).some((c) => c.outcome === 'ok')).toBe(true);
  });

  it('a cancelled job resumes its unfinished task when retried; a second retry of the finished job is a 409', async () => {
    await stack.setSimMode('cloud_main', { mode: 'hang' });
    const jobId = await submit();
    const synthesizeId = await waitFor('synthesize to call cloud_main', async () => {
      const job = (await request<JobJson>('GET', `/v1/jobs/${jobId}`)).json;
      const synthesize = job.tasks.find((t) => t.role === 'synthesize')!;
      const calls = callsOf(await stack.simCalls(), synthesize.task_id);
      return calls.some((c) => c.target === 'cloud_main') ? synthesize.task_id : undefined;
    });
    const extractIds = (await request<JobJson>('GET', `/v1/jobs/${jobId}`)).json.tasks.filter((t) => t.role === 'extract').map((t) => t.task_id);
    const before = await stack.simCalls();
    const extractCalls = extractIds.map((id) => callsOf(before, id).length);
    expect((await request('POST', `/v1/jobs/${jobId}/cancel`)).status).toBe(200);
    await stack.setSimMode('cloud_main', { mode: 'ok' });

    const retried = await request<{ status: string }>('POST', `/v1/jobs/${jobId}/retry`);
    expect(retried.status).toBe(202);
    const job = await waitForJob(jobId);
    expect(job.status).toBe('success');
    const calls = await stack.simCalls();
    expect(extractIds.map((id) => callsOf(calls, id).length)).toEqual(extractCalls);
    expect(callsOf(calls, synthesizeId).filter((c) => c.outcome === 'ok').length).toBeGreaterThanOrEqual(1);

    const again = await request<{ error: { code: string } }>('POST', `/v1/jobs/${jobId}/retry`);
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('job_not_retryable');
  });

  it("is a 404 for another tenant's job", async () => {
    const jobId = await submit();
    const res = await stack.request('POST', `/v1/jobs/${jobId}/retry`, undefined, BETA);
    expect(res.status).toBe(404);
    await waitForJob(jobId);
  });
});
