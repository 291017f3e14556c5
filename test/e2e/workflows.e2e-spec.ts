import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@switchyard/devkit';
import { TestStack } from '../support/stack';

interface TaskJson {
  task_id: string;
  agent_id: string;
  role: string;
  status: string;
  depends_on: string[];
  current_step: number;
  total_steps: number;
  error?: { code: string; message: string };
  route_targets: { step: number; target: string; outcome: string }[];
  output_summary: Record<string, unknown> | null;
}
interface JobJson {
  job_id: string;
  type: string;
  status: string;
  error?: string;
  progress: { completed: number; total: number };
  result?: Record<string, unknown>;
  tasks: TaskJson[];
}

const byRole = (job: JobJson, role: string) => job.tasks.filter((t) => t.role === role);

/**
 * Workflows other than doc_review, from their shipped files, on the real processes and the llm-sim:
 * a three-level DAG with fan-out, a custom output schema and an optional agent skipped while its
 * only target is down (incident_review), and a multi-step editor (research_report).
 */
describe('workflows end to end (real supervisor, worker and llm-sim processes)', () => {
  let stack: TestStack;
  // The shipped workflows and one broken file, in a directory the test may add to.
  const workflowsDir = mkdtempSync(join(tmpdir(), 'switchyard-workflows-'));

  beforeAll(async () => {
    cpSync('config/workflows', workflowsDir, { recursive: true });
    writeFileSync(join(workflowsDir, 'broken.yaml'), 'type: broken\ninput: {type: object}\nagents:\n  - role: a\n    after: [nobody]\n    prompt: {user: hi}\n');
    stack = await TestStack.start({
      workers: 1,
      env: { OPTIONAL_TARGET_WAIT_MS: '1000', TASK_MAX_ATTEMPTS: '2', WORKFLOWS_DIR: workflowsDir },
      // Triage and log readers go to the 7B; everything else unmatched (the historian: summarize,
      // medium) only to local_vllm_32b, which the incident test takes down.
      editRouterConfig: (yaml) =>
        yaml
          .replace('fallback_to_any_eligible: true', 'fallback_to_any_eligible: false')
          .replace('when: { all_else: true }\n      target: local_vllm_7b', 'when: { all_else: true }\n      target: local_vllm_32b')
          .replace(
            '  routes:\n',
            '  routes:\n    - name: light_work\n      when: { task_type: [classify, extract] }\n      target: local_vllm_7b\n      priority: 120\n',
          ),
    });
  });

  afterAll(async () => {
    await stack?.stop();
    rmSync(workflowsDir, { recursive: true, force: true });
  });

  it('reports a rejected workflow file in /readyz (file and path) while the valid ones serve', async () => {
    const res = await stack.request<{ status: string; checks: Array<{ name: string; ok: boolean; types?: string[]; rejected?: string[] }> }>('GET', '/readyz');
    expect(res.status).toBe(200);
    const workflows = res.json.checks.find((c) => c.name === 'workflows')!;
    expect(workflows.ok).toBe(true);
    expect(workflows.types).toEqual(expect.arrayContaining(['doc_review', 'incident_review', 'research_report']));
    expect(workflows.types).not.toContain('broken');
    expect(workflows.rejected).toEqual([expect.stringMatching(/broken\.yaml:\d+: agents\[0\]\.after/)]);
  });

  it('picks up a new workflow file without a restart: the supervisor accepts the type and a worker runs its new role', async () => {
    writeFileSync(
      join(workflowsDir, 'haiku.yaml'),
      'type: haiku\ndescription: One poem.\ninput: {type: object, required: [topic], properties: {topic: {type: string}}}\nagents:\n  - role: poet\n    meta: {task_type: chat, complexity: low}\n    prompt: {user: "A haiku about {{input.topic}}"}\n',
    );
    await waitFor('the supervisor to load haiku', async () => {
      const res = await stack.request<{ workflows: Array<{ type: string }> }>('GET', '/v1/workflows');
      return res.json.workflows.some((w) => w.type === 'haiku') ? true : undefined;
    });
    const submitted = await stack.request<{ job_id: string }>('POST', '/v1/jobs', { type: 'haiku', input: { topic: 'queues' } });
    expect(submitted.status).toBe(202);
    const job = await stack.waitForJob<JobJson>(submitted.json.job_id, {}, 60_000);
    expect(job.status).toBe('success');
    expect(job.tasks.map((t) => t.role)).toEqual(['poet']);
    expect(job.result).toMatchObject({ conclusion: expect.any(String) });
  });

  it('lists the job types with their input schema', async () => {
    const res = await stack.request<{ workflows: Array<{ type: string; description?: string; input_schema: { required?: string[] } }> }>('GET', '/v1/workflows');
    expect(res.status).toBe(200);
    const types = res.json.workflows.map((w) => w.type);
    expect(types).toEqual(expect.arrayContaining(['doc_review', 'incident_review', 'research_report']));
    const incident = res.json.workflows.find((w) => w.type === 'incident_review')!;
    expect(incident.description).toEqual(expect.any(String));
    expect(incident.input_schema.required).toEqual(['summary', 'logs']);
  });

  it('refuses an unknown type naming the known ones, and a bad input naming every path, writing nothing', async () => {
    const before = await stack.countRows();
    const unknown = await stack.request<{ error: { issues: Array<{ path: string; message: string }> } }>('POST', '/v1/jobs', { type: 'incident_reveiw', input: {} });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.issues[0]).toMatchObject({ path: 'type', message: expect.stringContaining('incident_review') });
    const bad = await stack.request<{ error: { issues: Array<{ path: string }> } }>('POST', '/v1/jobs', {
      type: 'incident_review',
      input: { summary: '', logs: [{ id: 'a' }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.issues.map((i) => i.path).sort()).toEqual(['input.logs.0.text', 'input.summary']);
    expect(await stack.countRows()).toBe(before);
  });

  it('research_report: an outline with a custom output, a writer per section, and a two-step editor', async () => {
    const submitted = await stack.request<{ job_id: string }>('POST', '/v1/jobs', {
      type: 'research_report',
      input: {
        topic: 'Running small language models next to a cloud model',
        audience: 'platform engineers',
        sections: [{ title: 'Costs', focus: 'per-token prices and GPU hours' }, { title: 'Latency' }, { title: 'Data residency' }],
      },
    });
    expect(submitted.status).toBe(202);
    const job = await stack.waitForJob<JobJson>(submitted.json.job_id, {}, 90_000);
    expect(job.status).toBe('success');
    expect(job.progress).toEqual({ completed: 5, total: 5 });
    const [outline] = byRole(job, 'outline');
    const writers = byRole(job, 'section_writer');
    const [editor] = byRole(job, 'editor');
    expect(outline!.output_summary).toEqual({ thesis: expect.any(String), key_questions: expect.any(Array) });
    expect(writers).toHaveLength(3);
    expect([...editor!.depends_on].sort()).toEqual([outline!.task_id, ...writers.map((w) => w.task_id)].sort());
    // gather, draft, tighten: each checkpointed; the draft goes to the cloud, the tightening stays local.
    expect(editor!.total_steps).toBe(3);
    expect(editor!.route_targets.map((r) => r.step)).toEqual([1, 2]);
    expect(editor!.route_targets[0]!.target).toBe('cloud_main');
    expect(editor!.route_targets[1]!.target).toMatch(/^local_/);
    const result = job.result as { report: { conclusion: string }; outline: unknown; sections: Array<{ section: string }> };
    expect(result.report.conclusion).toEqual(expect.any(String));
    expect(result.outline).toEqual(outline!.output_summary);
    expect(result.sections.map((s) => s.section)).toEqual(['Costs', 'Latency', 'Data residency']);
  });

  it('incident_review: triage with a custom output, one log reader per log, the historian skipped while its target is down, then merge', async () => {
    await stack.setSimMode('local_vllm_32b', { mode: 'down' });
    try {
      const submitted = await stack.request<{ job_id: string }>('POST', '/v1/jobs', {
        type: 'incident_review',
        input: {
          summary: 'Checkout returns 502 for a third of requests since the 14:02 deploy.',
          service: 'checkout',
          logs: [
            { id: 'gateway', text: '14:03 upstream checkout-7f9 returned 502.\n\n14:04 upstream checkout-7f9 returned 502.' },
            { id: 'checkout', text: '14:02 deploy v2.31 started. 14:03 connection pool exhausted (max 20).' },
          ],
        },
      });
      expect(submitted.status).toBe(202);
      const job = await stack.waitForJob<JobJson>(submitted.json.job_id, {}, 90_000);
      expect(job.status).toBe('success');

      const [triage] = byRole(job, 'triage');
      const readers = byRole(job, 'log_reader');
      const [historian] = byRole(job, 'historian');
      const [merge] = byRole(job, 'merge');
      // The DAG as planned: triage → (log_reader ×2, historian) → merge.
      expect(triage!.depends_on).toEqual([]);
      expect(readers.map((t) => t.agent_id)).toEqual(['log_reader-1', 'log_reader-2']);
      for (const reader of readers) expect(reader.depends_on).toEqual([triage!.task_id]);
      expect(historian!.depends_on).toEqual([triage!.task_id]);
      expect([...merge!.depends_on].sort()).toEqual([...readers.map((t) => t.task_id), historian!.task_id].sort());

      // The custom output came back as the schema says (the sim answers json_schema requests from the schema).
      expect(triage!.status).toBe('success');
      expect(triage!.output_summary).toEqual({ severity: expect.stringMatching(/^(low|medium|high|critical)$/), category: expect.any(String), rationale: expect.any(String) });
      const triageCalls = (await stack.simCalls()).filter((c) => c.headers['x-switchyard-task'] === triage!.task_id);
      expect(triageCalls.length).toBeGreaterThan(0);

      // The optional historian was given up and the job went on without it.
      expect(historian!.status).toBe('skipped');
      expect(historian!.error).toEqual({ code: 'skipped', message: expect.stringMatching(/^optional task skipped: /) });
      for (const reader of readers) expect(reader.status).toBe('success');
      expect(merge!.status).toBe('success');
      expect(merge!.current_step).toBe(merge!.total_steps);

      const result = job.result as { review: { conclusion: string }; triage: unknown; logs: Array<{ log_id: string; task_id: string }> };
      expect(result.review.conclusion).toEqual(expect.any(String));
      expect(result.triage).toEqual(triage!.output_summary);
      expect(result.logs.map((l) => l.log_id)).toEqual(['gateway', 'checkout']);
      // The merge prompt said which role had no findings.
      const mergeCall = (await stack.simCalls()).find((c) => c.headers['x-switchyard-task'] === merge!.task_id);
      expect(mergeCall).toBeDefined();
    } finally {
      await stack.setSimMode('local_vllm_32b', { mode: 'ok' });
    }
  });
});
