import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '@switchyard/workflows';
import { waitFor } from '../support/processes';
import { TestStack } from '../support/stack';

const ALPHA = { authorization: 'Bearer alpha-key-0001' };
const BETA = { authorization: 'Bearer beta-key-00002' };
const FRUGAL = { authorization: 'Bearer frugal-key-003' };
const SECRET = 'e2e-webhook-secret-0123456789';

interface JobJson {
  job_id: string;
  status: string;
  degraded?: { reason: string };
  tasks: Array<{ task_id: string; role: string; route_targets: Array<{ target: string }> }>;
  queue_position?: number;
  progress: { completed: number; total: number };
}

const docJob = (id: string, extra: Record<string, unknown> = {}) => ({
  type: 'doc_review',
  input: { question: 'What are the payment terms?', documents: [{ id, text: 'The invoice is due within 30 days.' }] },
  ...extra,
});

describe('admission, webhooks and job events (real supervisor, worker and llm-sim processes)', () => {
  let stack: TestStack;
  let dir: string;
  let receiver: Server;
  let receiverUrl: string;
  const received: Array<{ body: string; signature: string }> = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-tenants-'));
    const tenantsPath = join(dir, 'tenants.yaml');
    writeFileSync(tenantsPath, 'defaults: {max_running_jobs: 2}\nglobal: {max_running_jobs: 64}\ntenants:\n  beta: {max_running_jobs: 4}\n  frugal: {daily_budget_usd: 0}\n');
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ body, signature: String(req.headers['x-switchyard-signature'] ?? '') });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/switchyard`;
    stack = await TestStack.start({
      apiKeys: 'alpha:alpha-key-0001,beta:beta-key-00002,frugal:frugal-key-003',
      workers: 1,
      env: { TENANTS_CONFIG: tenantsPath, WEBHOOK_SECRET: SECRET, WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WORKER_CONCURRENCY: '16' },
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await new Promise((resolve) => receiver?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs at most 2 of 6 jobs of a tenant with limit 2 at once, queued FIFO, while another tenant starts at once', async () => {
    // Slow calls keep each job running long enough to watch the limit hold.
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 400 });
    await stack.setSimMode('cloud_main', { mode: 'slow', delay_ms: 400 });
    try {
      const alphaJobs: string[] = [];
      const statuses: string[] = [];
      for (let i = 0; i < 6; i += 1) {
        const res = await stack.request<{ job_id: string; status: string }>('POST', '/v1/jobs', docJob(`a-${i}`), ALPHA);
        expect(res.status).toBe(202);
        alphaJobs.push(res.json.job_id);
        statuses.push(res.json.status);
      }
      expect(statuses.slice(0, 2)).toEqual(['pending', 'pending']);
      expect(statuses.slice(2)).toEqual(['queued', 'queued', 'queued', 'queued']);
      const positions = await Promise.all(alphaJobs.slice(2).map(async (id) => (await stack.request<JobJson>('GET', `/v1/jobs/${id}`, undefined, ALPHA)).json));
      expect(positions.map((j) => [j.status, j.queue_position])).toEqual([
        ['queued', 1],
        ['queued', 2],
        ['queued', 3],
        ['queued', 4],
      ]);

      const beta = await stack.request<{ job_id: string; status: string }>('POST', '/v1/jobs', docJob('b-0'), BETA);
      expect(beta.json.status).toBe('pending');

      let maxRunning = 0;
      let fifo = true;
      await waitFor(
        'every alpha job to finish',
        async () => {
          const list = await stack.request<{ jobs: JobJson[] }>('GET', '/v1/jobs?limit=50', undefined, ALPHA);
          const running = list.json.jobs.filter((j) => ['pending', 'running', 'paused'].includes(j.status));
          maxRunning = Math.max(maxRunning, running.length);
          // First in, first out: the alpha jobs that have started are always the oldest ones submitted.
          const started = alphaJobs.filter((id) => list.json.jobs.some((j) => j.job_id === id && j.status !== 'queued'));
          fifo &&= started.every((id, index) => id === alphaJobs[index]);
          return list.json.jobs.filter((j) => alphaJobs.includes(j.job_id)).every((j) => j.status === 'success') ? true : undefined;
        },
        120_000,
        50,
      );
      expect(maxRunning).toBeGreaterThan(0);
      expect(maxRunning).toBeLessThanOrEqual(2);
      expect(fifo).toBe(true);
      expect((await stack.waitForJob<JobJson>(beta.json.job_id, BETA)).status).toBe('success');
    } finally {
      await stack.setSimMode('local_vllm_7b', { mode: 'ok' });
      await stack.setSimMode('cloud_main', { mode: 'ok' });
    }
  });

  it('POSTs the finished job to its callback_url with a signature the receiver verifies', async () => {
    const res = await stack.request<{ job_id: string }>('POST', '/v1/jobs', docJob('w-0', { callback_url: receiverUrl }), BETA);
    expect(res.status).toBe(202);
    const delivery = await waitFor('the webhook', async () => received.find((r) => (JSON.parse(r.body) as JobJson).job_id === res.json.job_id), 60_000);
    expect(verifyWebhook(SECRET, delivery.signature, delivery.body, Math.floor(Date.now() / 1000))).toMatchObject({ ok: true });
    const job = JSON.parse(delivery.body) as JobJson;
    expect(job.status).toBe('success');
    expect(job).toEqual((await stack.request<JobJson>('GET', `/v1/jobs/${res.json.job_id}`, undefined, BETA)).json);
  });

  it('refuses a callback_url on a private address or another scheme with 400 naming callback_url', async () => {
    for (const url of ['http://10.0.0.7/hook', 'http://localhost:9/hook', 'ftp://example.com/hook', 'http://user:pw@127.0.0.1/hook']) {
      const res = await stack.request<{ error: { details?: Array<{ path: string }> } }>('POST', '/v1/jobs', docJob('x', { callback_url: url }), BETA);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.json)).toContain('callback_url');
    }
  });

  it('streams a job as server-sent events that end with its terminal status; another tenant gets 404', async () => {
    const res = await stack.request<{ job_id: string }>('POST', '/v1/jobs', docJob('s-0'), BETA);
    const other = await fetch(`${stack.baseUrl}/v1/jobs/${res.json.job_id}/events`, { headers: ALPHA });
    expect(other.status).toBe(404);
    await other.body?.cancel();

    const stream = await fetch(`${stack.baseUrl}/v1/jobs/${res.json.job_id}/events`, { headers: BETA });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const text = await stream.text(); // resolves only when the server ends the stream
    const events = text
      .split('\n\n')
      .filter((block) => block.startsWith('id:'))
      .map((block) => {
        const event = /^event: (.*)$/m.exec(block)![1];
        const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as JobJson;
        return { event, data };
      });
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(events.slice(0, -1).every((e) => e.event === 'job')).toBe(true);
    expect(events.at(-1)).toMatchObject({ event: 'end', data: { job_id: res.json.job_id, status: 'success' } });
  });

  it("runs a tenant over its daily budget on local targets only and says the job was degraded; other tenants still use the cloud", async () => {
    const frugal = await stack.request<{ job_id: string }>('POST', '/v1/jobs', docJob('f-0'), FRUGAL);
    const normal = await stack.request<{ job_id: string }>('POST', '/v1/jobs', docJob('n-0'), BETA);
    const degraded = await stack.waitForJob<JobJson>(frugal.json.job_id, FRUGAL);
    const regular = await stack.waitForJob<JobJson>(normal.json.job_id, BETA);
    expect(degraded.status).toBe('success');
    expect(degraded.degraded).toMatchObject({ reason: 'daily_budget_spent', daily_budget_usd: 0 });
    expect(regular.degraded).toBeUndefined();

    const calls = await stack.simCalls();
    const targetsOf = (job: JobJson) => {
      const ids = new Set(job.tasks.map((t) => t.task_id));
      return calls.filter((c) => ids.has(c.headers['x-switchyard-task'] ?? '')).map((c) => c.target);
    };
    expect(targetsOf(degraded).length).toBeGreaterThan(0);
    expect(targetsOf(degraded).every((target) => target.startsWith('local_'))).toBe(true);
    // The same job of a tenant within its budget synthesizes on the cloud (the shipped routes).
    expect(targetsOf(regular)).toContain('cloud_main');
  });
});
