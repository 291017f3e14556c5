import { TestStack, type SimCall } from '../support/stack';

interface TaskJson {
  task_id: string;
  parent_task_id: string | null;
  agent_id: string;
  role: string;
  status: string;
  depends_on: string[];
  route_targets: { step: number; target: string; outcome: string }[];
  output_summary: Record<string, unknown> | null;
  error?: { code: string; message: string };
}
interface JobJson {
  job_id: string;
  type: string;
  status: string;
  progress: { completed: number; total: number };
  result?: Record<string, unknown>;
  error?: { code: string; message: string };
  tasks: TaskJson[];
}

const CLOUD_TARGETS = ['cloud_main'];

/**
 * Goal jobs (SPEC §6) on the real processes: the planner asks the llm-sim for a
 * switchyard_plan, its subtasks become rows under the planner task and run in dependency
 * order, and combine answers. The sim's plan: gather → analyse (after gather) → write (after both).
 */
describe('goal jobs end to end (real supervisor, worker and llm-sim processes)', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 1 });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  async function runGoal(meta: Record<string, unknown> = {}): Promise<{ job: JobJson; calls: SimCall[] }> {
    const submitted = await stack.request<{ job_id: string; status: string }>('POST', '/v1/jobs', {
      type: 'goal',
      input: { goal: 'Decide whether to move our queue from Redis to Postgres', context: 'A team of four runs it.' },
      ...(Object.keys(meta).length ? { meta } : {}),
    });
    expect(submitted.status).toBe(202);
    const job = await stack.waitForJob<JobJson>(submitted.json.job_id, {}, 90_000);
    const taskIds = new Set(job.tasks.map((t) => t.task_id));
    const calls = (await stack.simCalls()).filter((c) => taskIds.has(c.headers['x-switchyard-task'] ?? ''));
    return { job, calls };
  }

  /** The sim's call sequence number of a task's (last) model call. */
  const lastCallOf = (calls: SimCall[], taskId: string) => Math.max(...calls.filter((c) => c.headers['x-switchyard-task'] === taskId).map((c) => c.seq));
  const firstCallOf = (calls: SimCall[], taskId: string) => Math.min(...calls.filter((c) => c.headers['x-switchyard-task'] === taskId).map((c) => c.seq));

  it('plans with the sim, runs the subtasks under the planner in dependency order, and combines them', async () => {
    const { job, calls } = await runGoal();
    expect(job.status).toBe('success');
    expect(job.tasks.map((t) => [t.role, t.status])).toEqual([
      ['planner', 'success'],
      ['researcher', 'success'],
      ['analyst', 'success'],
      ['writer', 'success'],
      ['combine', 'success'],
    ]);
    const [planner, gather, analyse, write, combine] = job.tasks as [TaskJson, TaskJson, TaskJson, TaskJson, TaskJson];
    for (const subtask of [gather, analyse, write]) expect(subtask.parent_task_id).toBe(planner.task_id);
    expect(gather.depends_on).toEqual([planner.task_id]);
    expect(analyse.depends_on).toEqual([planner.task_id, gather.task_id]);
    expect(write.depends_on).toEqual([planner.task_id, gather.task_id, analyse.task_id]);
    expect(combine.depends_on).toEqual([planner.task_id, gather.task_id, analyse.task_id, write.task_id]);
    expect(job.progress).toEqual({ completed: 5, total: 5 });

    // Dependency order, as the simulator saw the calls: each task called after those it waits for answered.
    expect(lastCallOf(calls, planner.task_id)).toBeLessThan(firstCallOf(calls, gather.task_id));
    expect(lastCallOf(calls, gather.task_id)).toBeLessThan(firstCallOf(calls, analyse.task_id));
    expect(lastCallOf(calls, analyse.task_id)).toBeLessThan(firstCallOf(calls, write.task_id));
    expect(lastCallOf(calls, write.task_id)).toBeLessThan(firstCallOf(calls, combine.task_id));
    // Each planned task got its own instruction; combine saw every subtask.
    const preview = (taskId: string) => calls.find((c) => c.headers['x-switchyard-task'] === taskId)!.last_user_message_preview;
    expect(preview(analyse.task_id)).toContain('Overall goal: Decide whether to move our queue');
    expect(calls.filter((c) => c.headers['x-switchyard-task'] === planner.task_id)).toHaveLength(1);
    expect(job.result).toMatchObject({ conclusion: expect.any(String) });
    // Not sensitive: the analyst and combine (reasoning, high) go to the cloud, unlike the sensitive goal below.
    expect(calls.some((c) => CLOUD_TARGETS.includes(c.target))).toBe(true);
  });

  it('re-asks a bad plan once on another target and runs the good one', async () => {
    const res = await fetch(`${stack.simControl}/plans`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ invalid_next: 1 }) });
    expect(res.status).toBe(200);
    const { job, calls } = await runGoal();
    expect(job.status).toBe('success');
    const planner = job.tasks.find((t) => t.role === 'planner')!;
    const plannerCalls = calls.filter((c) => c.headers['x-switchyard-task'] === planner.task_id);
    expect(plannerCalls).toHaveLength(2);
    expect(plannerCalls[0]!.target).not.toBe(plannerCalls[1]!.target);
    expect(planner.route_targets.map((r) => r.outcome)).toEqual(['bad_output', 'ok']);
    expect(job.tasks.filter((t) => t.parent_task_id === planner.task_id)).toHaveLength(3);
  });

  it('fails the job with the reason when the re-asked plan is bad too, writing no subtask', async () => {
    await fetch(`${stack.simControl}/plans`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ invalid_next: 2 }) });
    const { job } = await runGoal();
    expect(job.status).toBe('failed');
    const planner = job.tasks.find((t) => t.role === 'planner')!;
    expect(planner.status).toBe('failed');
    expect(planner.error).toEqual({ code: 'bad_plan', message: expect.stringMatching(/not valid plans: dependency cycle/) });
    expect(job.tasks.map((t) => t.role)).toEqual(['planner', 'combine']);

    // Retried, the planner asks again (the bad plans it was given are not reused) and the job runs.
    const retried = await stack.request<{ status: string }>('POST', `/v1/jobs/${job.job_id}/retry`);
    expect(retried.status).toBe(202);
    const after = await stack.waitForJob<JobJson>(job.job_id, {}, 90_000);
    expect(after.status).toBe('success');
    expect(after.tasks.map((t) => t.role)).toEqual(['planner', 'researcher', 'analyst', 'writer', 'combine']);
  });

  it('plans and runs a sensitive goal on local targets only', async () => {
    const { job, calls } = await runGoal({ sensitivity: 'sensitive' });
    expect(job.status).toBe('success');
    expect(job.tasks).toHaveLength(5);
    expect(calls.length).toBeGreaterThanOrEqual(5);
    expect(calls.filter((c) => CLOUD_TARGETS.includes(c.target))).toEqual([]);
  });
});
