import { parsePrometheusText, sampleValue, samplesOf, type ParsedPrometheusText } from '@switchyard/observability';
import { freePort, waitFor } from '../support/processes';
import { TestStack } from '../support/stack';

const ADMIN_TOKEN = 'e2e-admin-token-0123456789';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

interface CostGroupJson {
  key: string | null;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  errors: number;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
}
interface CostReportJson {
  group_by: string;
  since: string;
  until: string;
  tenant: string | null;
  groups: CostGroupJson[];
  totals: Omit<CostGroupJson, 'key'>;
}

const documents = [
  { id: 'doc-1', text: 'The invoice is due within 30 days of delivery.' },
  { id: 'doc-2', text: 'Either party may terminate with 90 days written notice.' },
];

const EXPECTED_SUPERVISOR_TYPES: Record<string, string> = {
  switchyard_http_requests_total: 'counter',
  switchyard_http_request_duration_seconds: 'histogram',
  switchyard_jobs: 'gauge',
  switchyard_running_jobs: 'gauge',
  switchyard_tasks_stale: 'gauge',
  switchyard_queue_jobs: 'gauge',
  switchyard_breaker_state: 'gauge',
  switchyard_target_health_score: 'gauge',
  switchyard_target_share: 'gauge',
  switchyard_upstream_calls_total: 'counter',
  switchyard_upstream_cost_usd_total: 'counter',
  switchyard_upstream_latency_seconds: 'histogram',
  switchyard_ledger_rows_written_total: 'counter',
  process_uptime_seconds: 'gauge',
  process_resident_memory_bytes: 'gauge',
  nodejs_eventloop_lag_seconds: 'gauge',
};

/** A histogram with observations whose labels include `labels`: cumulative buckets ending in +Inf = count. */
function expectHistogram(parsed: ParsedPrometheusText, name: string, labels: Record<string, string>): void {
  const buckets = samplesOf(parsed, `${name}_bucket`, labels);
  expect(buckets.length).toBeGreaterThan(1);
  const infinite = buckets.filter((b) => b.labels.le === '+Inf').reduce((sum, b) => sum + b.value, 0);
  const count = samplesOf(parsed, `${name}_count`, labels).reduce((sum, s) => sum + s.value, 0);
  expect(count).toBeGreaterThan(0);
  expect(infinite).toBe(count);
  expect(samplesOf(parsed, `${name}_sum`, labels).length).toBeGreaterThan(0);
}

describe('cost ledger and metrics end to end (real supervisor, worker and llm-sim)', () => {
  let stack: TestStack;
  let workerMetricsUrl: string;
  let jobId: string;

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0, env: { ADMIN_TOKEN } });
    const workerPort = await freePort();
    await stack.startWorker({ WORKER_PORT: String(workerPort) });
    workerMetricsUrl = `http://127.0.0.1:${workerPort}/metrics`;

    const submitted = await stack.request<{ job_id: string }>('POST', '/v1/jobs', {
      type: 'doc_review',
      input: { question: 'What are the terms?', documents },
    });
    expect(submitted.status).toBe(202);
    jobId = submitted.json.job_id;
    const job = await stack.waitForJob<{ status: string }>(jobId);
    expect(job.status).toBe('success');
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
  }, 30_000);

  it('GET /admin/costs?group_by=target shows the local and the cloud target, with calls and cost', async () => {
    // The worker writes the ledger in the background (about once a second): wait for the rows.
    const report = await waitFor(
      'the ledger rows of both targets',
      async () => {
        const res = await stack.request<CostReportJson>('GET', '/admin/costs?group_by=target', undefined, admin);
        expect(res.status).toBe(200);
        const keys = res.json.groups.map((g) => g.key);
        return keys.includes('local_vllm_7b') && keys.includes('cloud_main') ? res.json : undefined;
      },
      15_000,
    );
    expect(report.group_by).toBe('target');
    expect(report.tenant).toBeNull();
    const byTarget = Object.fromEntries(report.groups.map((g) => [g.key, g]));
    expect(byTarget.local_vllm_7b!.calls).toBeGreaterThanOrEqual(documents.length);
    expect(byTarget.cloud_main!.calls).toBeGreaterThanOrEqual(1);
    for (const target of ['local_vllm_7b', 'cloud_main']) {
      const group = byTarget[target]!;
      expect(group.cost_usd).toBeGreaterThan(0);
      expect(group.input_tokens).toBeGreaterThan(0);
      expect(group.output_tokens).toBeGreaterThan(0);
      expect(group.latency_p50_ms).toBeGreaterThan(0);
    }
    expect(report.totals.calls).toBe(report.groups.reduce((n, g) => n + g.calls, 0));

    // The rows carry the job, the task and the tenant (dev mode: tenant "dev").
    const rows = await stack.db.pool.query<{ job_id: string; task_id: string | null; tenant_id: string; source: string }>(
      'select job_id, task_id, tenant_id, source from model_call_ledger',
    );
    expect(rows.rows.length).toBe(report.totals.calls);
    for (const row of rows.rows) expect(row).toMatchObject({ job_id: jobId, task_id: expect.any(String), tenant_id: 'dev', source: 'worker' });

    const byTenant = await stack.request<CostReportJson>('GET', '/admin/costs?group_by=tenant&tenant=dev', undefined, admin);
    expect(byTenant.json.groups.map((g) => g.key)).toEqual(['dev']);
    const otherTenant = await stack.request<CostReportJson>('GET', '/admin/costs?group_by=outcome&tenant=nobody', undefined, admin);
    expect(otherTenant.json.totals.calls).toBe(0);
  }, 30_000);

  it('refuses /admin/costs without the admin token (401) and names a bad group_by (400)', async () => {
    const anonymous = await stack.request<{ error: { code: string } }>('GET', '/admin/costs?group_by=target');
    expect(anonymous.status).toBe(401);
    expect(anonymous.json.error.code).toBe('unauthorized');

    const wrongToken = await stack.request('GET', '/admin/costs', undefined, { authorization: 'Bearer not-the-admin-token' });
    expect(wrongToken.status).toBe(401);

    const bad = await stack.request<{ error: { code: string; issues: { path: string; message: string }[] } }>(
      'GET',
      '/admin/costs?group_by=colour',
      undefined,
      admin,
    );
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('invalid_request');
    expect(bad.json.error.issues).toEqual([expect.objectContaining({ path: 'query.group_by' })]);

    const badWindow = await stack.request<{ error: { issues: { path: string }[] } }>('GET', '/admin/costs?since=2026-02-01&until=2026-01-01', undefined, admin);
    expect(badWindow.status).toBe(400);
    expect(badWindow.json.error.issues[0]!.path).toBe('query.since');
  });

  it('GET /metrics on the supervisor is Prometheus text: HTTP request histograms, jobs, queues, targets, ledger and process', async () => {
    await stack.request('GET', '/v1/jobs?limit=1');
    const res = await fetch(`${stack.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    // Parsing checks every line's syntax too.
    const parsed = parsePrometheusText(await res.text());
    expect(Object.fromEntries([...parsed.types].filter(([name]) => EXPECTED_SUPERVISOR_TYPES[name] !== undefined))).toEqual(EXPECTED_SUPERVISOR_TYPES);
    expect(sampleValue(parsed, 'switchyard_http_requests_total', { method: 'GET', route: '/v1/jobs', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(parsed, 'switchyard_http_requests_total', { method: 'GET', route: '/admin/costs', status: '401' })).toBeGreaterThanOrEqual(1);
    expectHistogram(parsed, 'switchyard_http_request_duration_seconds', { method: 'GET', route: '/v1/jobs', status: '200' });
    expect(sampleValue(parsed, 'switchyard_jobs', { status: 'success' })).toBe(1);
    expect(sampleValue(parsed, 'switchyard_tasks_stale', {})).toBe(0);
    expect(samplesOf(parsed, 'switchyard_queue_jobs', { role: 'extract', state: 'waiting' })).toHaveLength(1);
    expect(sampleValue(parsed, 'switchyard_breaker_state', { target: 'cloud_main', target_type: 'cloud', state: 'closed' })).toBe(1);
    expect(sampleValue(parsed, 'switchyard_target_health_score', { target: 'local_vllm_7b', target_type: 'local' })).toBeGreaterThan(0);
    expect(sampleValue(parsed, 'process_uptime_seconds', {})).toBeGreaterThan(0);
  });

  it("GET /metrics on the worker's WORKER_PORT shows its upstream calls, latency, queue wait, task and step histograms", async () => {
    const res = await fetch(workerMetricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const parsed = parsePrometheusText(await res.text());
    const total = (name: string, labels: Record<string, string>) => samplesOf(parsed, name, labels).reduce((sum, s) => sum + s.value, 0);
    expect(total('switchyard_upstream_calls_total', { target: 'local_vllm_7b', outcome: 'ok' })).toBeGreaterThanOrEqual(documents.length);
    expect(total('switchyard_upstream_calls_total', { target: 'cloud_main', outcome: 'ok', tenant: 'dev' })).toBeGreaterThanOrEqual(1);
    expect(total('switchyard_upstream_cost_usd_total', { target: 'cloud_main', outcome: 'ok' })).toBeGreaterThan(0);
    expect(total('switchyard_upstream_input_tokens_total', { target: 'local_vllm_7b', outcome: 'ok' })).toBeGreaterThan(0);
    expect(sampleValue(parsed, 'switchyard_ledger_rows_written_total', {})).toBeGreaterThanOrEqual(documents.length + 1);
    expect(parsed.types.get('process_resident_memory_bytes')).toBe('gauge');
    for (const name of ['switchyard_upstream_latency_seconds', 'switchyard_upstream_first_token_seconds', 'switchyard_queue_wait_seconds', 'switchyard_task_duration_seconds', 'switchyard_step_duration_seconds']) {
      expect(parsed.types.get(name)).toBe('histogram');
      expectHistogram(parsed, name, {});
    }
    expect(total('switchyard_task_duration_seconds_count', { role: 'extract', outcome: 'completed' })).toBe(documents.length);
    expect(samplesOf(parsed, 'switchyard_breaker_state', { state: 'open' }).map((s) => s.value)).toEqual([0, 0, 0]);
  });
});
