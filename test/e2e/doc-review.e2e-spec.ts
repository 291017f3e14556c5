import { TestStack, type SimCall } from '../support/stack';

interface TaskJson {
  task_id: string;
  parent_task_id: string;
  agent_id: string;
  role: string;
  status: string;
  current_step: number;
  total_steps: number;
  retry_count: number;
  route_targets: { step: number; target: string; outcome: string; rule: string }[];
  output_summary: { conclusion: string; evidence: string[]; confidence: number | null; document_id?: string } | null;
}
interface JobJson {
  job_id: string;
  type: string;
  status: string;
  progress: { completed: number; total: number };
  result?: {
    synthesis: { conclusion: string; evidence: string[]; confidence: number | null };
    documents: { document_id: string; conclusion: string; confidence: number | null }[];
  };
  cost?: { usd: number };
  tasks: TaskJson[];
}

const documents = [
  { id: 'contract-a', text: 'The invoice is due within 30 days of delivery.\n\nLate payments accrue 2% interest per month.' },
  { id: 'contract-b', text: 'Payment is made by bank transfer. Disputes go to arbitration in Zurich.' },
  { id: 'contract-c', text: 'Either party may terminate with 90 days written notice.' },
];

function callsFor(calls: SimCall[], taskIds: string[]): SimCall[] {
  const wanted = new Set(taskIds);
  return calls.filter((c) => wanted.has(c.headers['x-switchyard-task'] ?? ''));
}

describe('doc_review end to end (real supervisor, worker and llm-sim processes)', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 1 });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('fans out one extract per document, synthesizes once, and routes by metadata', async () => {
    const submitted = await stack.request<{ job_id: string; status: string }>('POST', '/v1/jobs', {
      type: 'doc_review',
      input: { question: 'What are the payment terms?', documents },
    });
    expect(submitted.status).toBe(202);
    expect(submitted.json.status).toBe('pending');

    const job = await stack.waitForJob<JobJson>(submitted.json.job_id);
    expect(job.status).toBe('success');
    expect(job.progress).toEqual({ completed: 4, total: 4 });

    const extracts = job.tasks.filter((t) => t.role === 'extract');
    const synthesize = job.tasks.filter((t) => t.role === 'synthesize');
    expect(extracts).toHaveLength(3);
    expect(synthesize).toHaveLength(1);
    for (const task of job.tasks) {
      expect(task.parent_task_id).toBe(job.job_id);
      expect(task.status).toBe('success');
      expect(task.total_steps).toBeGreaterThanOrEqual(2);
      expect(task.current_step).toBe(task.total_steps);
    }
    // Non-sensitive extract → the local 7B; synthesize (reasoning, high) → the cloud.
    for (const task of extracts) expect(task.route_targets.map((r) => r.target)).toEqual(['local_vllm_7b']);
    expect(synthesize[0]!.route_targets.map((r) => r.target)).toEqual(['cloud_main']);
    expect(synthesize[0]!.route_targets[0]!.rule).toBe('complex_reasoning');

    // The result: the synthesis and one summary per document.
    expect(job.result?.synthesis.conclusion).toEqual(expect.any(String));
    expect(job.result?.synthesis.confidence).toBeGreaterThan(0);
    expect(job.result?.documents.map((d) => d.document_id).sort()).toEqual(['contract-a', 'contract-b', 'contract-c']);
    expect(job.cost?.usd).toBeGreaterThan(0);

    // The sim saw exactly one call per task, each where the task row says it went.
    const calls = callsFor(await stack.simCalls(), job.tasks.map((t) => t.task_id));
    expect(calls).toHaveLength(4);
    for (const task of job.tasks) {
      const own = calls.filter((c) => c.headers['x-switchyard-task'] === task.task_id);
      expect(own.map((c) => c.target)).toEqual(task.route_targets.map((r) => r.target));
    }
    // Fan-in: the synthesize call came after every extract call.
    const synthSeq = calls.find((c) => c.headers['x-switchyard-task'] === synthesize[0]!.task_id)!.seq;
    for (const c of calls) if (c.target !== 'cloud_main') expect(c.seq).toBeLessThan(synthSeq);
  });

  it('keeps a sensitive job on local targets for every call', async () => {
    const submitted = await stack.request<{ job_id: string }>('POST', '/v1/jobs', {
      type: 'doc_review',
      input: { question: 'Which clauses mention termination?', documents },
      meta: { sensitivity: 'sensitive' },
    });
    expect(submitted.status).toBe(202);
    const job = await stack.waitForJob<JobJson>(submitted.json.job_id);
    expect(job.status).toBe('success');

    const synthesize = job.tasks.find((t) => t.role === 'synthesize')!;
    expect(synthesize.route_targets.map((r) => r.target)).toEqual(['local_vllm_32b']);
    for (const task of job.tasks.filter((t) => t.role === 'extract')) {
      expect(task.route_targets.every((r) => r.target.startsWith('local_'))).toBe(true);
    }
    const calls = callsFor(await stack.simCalls(), job.tasks.map((t) => t.task_id));
    expect(calls.length).toBe(4);
    expect(calls.filter((c) => c.target === 'cloud_main')).toEqual([]);
  });

  it('retries unparseable model output once elsewhere and records it as bad output', async () => {
    await stack.setSimMode('local_vllm_7b', { mode: 'garbage' });
    try {
      const submitted = await stack.request<{ job_id: string }>('POST', '/v1/jobs', {
        type: 'doc_review',
        input: { question: 'Who pays?', documents: documents.slice(0, 1) },
      });
      const job = await stack.waitForJob<JobJson>(submitted.json.job_id);
      expect(job.status).toBe('success');
      const extract = job.tasks.find((t) => t.role === 'extract')!;
      expect(extract.route_targets[0]).toMatchObject({ target: 'local_vllm_7b', outcome: 'bad_output' });
      expect(extract.route_targets[1]?.target).not.toBe('local_vllm_7b');
      expect(extract.route_targets[1]?.outcome).toBe('ok');
      expect(extract.output_summary?.confidence).toEqual(expect.any(Number));
    } finally {
      await stack.setSimMode('local_vllm_7b', { mode: 'ok' });
    }
  });

  it('keeps the raw text with confidence null when no target answers with valid JSON', async () => {
    await stack.setSimMode('local_vllm_7b', { mode: 'garbage' });
    await stack.setSimMode('local_vllm_32b', { mode: 'garbage' });
    try {
      const submitted = await stack.request<{ job_id: string }>('POST', '/v1/jobs', {
        type: 'doc_review',
        input: { question: 'Who pays?', documents: documents.slice(0, 1) },
        meta: { sensitivity: 'sensitive' },
      });
      const job = await stack.waitForJob<JobJson>(submitted.json.job_id);
      expect(job.status).toBe('success');
      const extract = job.tasks.find((t) => t.role === 'extract')!;
      expect(extract.output_summary?.confidence).toBeNull();
      expect(extract.output_summary?.conclusion.length).toBeGreaterThan(0);
      expect(extract.route_targets.map((r) => r.outcome)).toEqual(['bad_output', 'bad_output']);
      expect(extract.route_targets.every((r) => r.target.startsWith('local_'))).toBe(true);
    } finally {
      await stack.setSimMode('local_vllm_7b', { mode: 'ok' });
      await stack.setSimMode('local_vllm_32b', { mode: 'ok' });
    }
  });
});
