import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { randomUUID } from 'node:crypto';
import { ROUTES } from '../../apps/supervisor/src/openapi/route-catalog';
import { REPO_ROOT } from '../support/processes';
import { TestStack } from '../support/stack';

/**
 * The operator dashboard at /ui in headless Chromium (Debian's package; .ci/run installs it),
 * against the real supervisor, worker and llm-sim: sign in with the admin token, watch a
 * running job move to success, open its task tree, drain a target and see the change; a
 * wrong token shows an error and no data. Screenshots go to test-artifacts/dashboard/.
 */
const ADMIN_TOKEN = 'admin-token-for-dashboard-e2e';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts', 'dashboard');
/** Long enough for a loaded machine; every wait below ends as soon as its condition holds. */
const UI_WAIT_MS = 60_000;

const documents = [
  { id: 'contract', text: 'Invoices are due within 30 days of delivery.' },
  { id: 'annex', text: 'Late payments carry 2 % interest per month.' },
];

describe('operator dashboard in headless Chromium (real supervisor, worker, llm-sim)', () => {
  let stack: TestStack;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    [stack, browser] = await Promise.all([
      TestStack.start({ workers: 1, env: { ADMIN_TOKEN } }),
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS }),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  async function signIn(page: Page, token: string): Promise<void> {
    await page.goto(`${stack.baseUrl}/ui`);
    await page.locator('input[name="token"]').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  it('signs in, follows a running job to success, opens its task tree, and drains a target', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await signIn(page, ADMIN_TOKEN);
      await page.getByRole('heading', { name: 'Jobs' }).waitFor({ timeout: UI_WAIT_MS });

      // Slow upstreams (well under the first-token timeouts) keep the job running for several
      // of the list's 2 s refreshes; they are set back to normal once the page showed it running.
      for (const target of ['local_vllm_7b', 'local_vllm_32b', 'cloud_main']) await stack.setSimMode(target, { mode: 'slow', delay_ms: 8_000 });
      const submitted = await stack.request<{ job_id: string }>('POST', '/v1/jobs', { type: 'doc_review', input: { question: 'When are invoices due?', documents } });
      expect(submitted.status).toBe(202);
      const jobId = submitted.json.job_id;

      const row = page.locator(`tr[data-job-id="${jobId}"]`);
      await row.locator('[data-status="running"]').waitFor({ timeout: UI_WAIT_MS });
      await page.screenshot({ path: join(ARTIFACTS, 'jobs-running.png') });
      for (const target of ['local_vllm_7b', 'local_vllm_32b', 'cloud_main']) await stack.setSimMode(target, { mode: 'ok' });
      await row.locator('[data-status="success"]').waitFor({ timeout: UI_WAIT_MS });
      await page.screenshot({ path: join(ARTIFACTS, 'jobs.png') });

      await row.getByRole('link').click();
      const job = page.locator(`section[data-job-id="${jobId}"]`);
      await job.waitFor({ timeout: UI_WAIT_MS });
      const tasks = job.locator('article.task');
      await expect(tasks.count()).resolves.toBe(3);
      expect(await job.locator('article.task[data-role="extract"]').count()).toBe(2);
      expect(await job.locator('article.task[data-role="synthesize"] [data-status="success"]').count()).toBe(1);
      // Every task shows its steps and the calls it made, with the route each took.
      for (const task of await tasks.all()) {
        expect(await task.locator('ol.steps li').count()).toBeGreaterThan(0);
        expect(await task.locator('table.calls tbody tr').count()).toBeGreaterThan(0);
      }
      expect(await job.locator('table.calls td', { hasText: /local_vllm|cloud_main/ }).count()).toBeGreaterThan(0);
      await page.screenshot({ path: join(ARTIFACTS, 'job.png'), fullPage: true });

      await page.locator('nav a[data-tab="targets"]').click();
      const cloud = page.locator('tr[data-target="cloud_main"]');
      await cloud.waitFor({ timeout: UI_WAIT_MS });
      expect(await cloud.getAttribute('data-drained')).toBe('false');
      await cloud.locator('button[data-action="drain"]').click();
      const dialog = page.locator('dialog[open]');
      await expect(dialog.textContent()).resolves.toContain('Drain cloud_main?');
      await dialog.locator('button[data-action="confirm"]').click();
      await page.locator('tr[data-target="cloud_main"][data-drained="true"]').waitFor({ timeout: UI_WAIT_MS });
      await expect(page.locator('tr[data-target="cloud_main"] td.overrides').textContent()).resolves.toContain('drained');
      await page.screenshot({ path: join(ARTIFACTS, 'targets.png'), fullPage: true });
      const api = await stack.request<{ targets: Array<{ name: string; drained: boolean }> }>('GET', '/admin/targets', undefined, { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect(api.json.targets.find((t) => t.name === 'cloud_main')?.drained).toBe(true);

      // Cancelling the confirmation changes nothing.
      await page.locator('tr[data-target="cloud_main"] button[data-action="enable"]').click();
      await page.locator('dialog[open]').getByRole('button', { name: 'Cancel' }).click();
      await page.locator('nav a[data-tab="queues"]').click();
      await page.locator('tr[data-queue="extract"]').waitFor({ timeout: UI_WAIT_MS });
      const after = await stack.request<{ targets: Array<{ name: string; drained: boolean }> }>('GET', '/admin/targets', undefined, { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect(after.json.targets.find((t) => t.name === 'cloud_main')?.drained).toBe(true);

      // The job's calls are in the cost charts, by target and by tenant.
      await page.locator('nav a[data-tab="costs"]').click();
      await page.locator('figure[data-chart="cost by target (USD)"] canvas').waitFor({ timeout: UI_WAIT_MS });
      await page.locator('figure[data-chart="cost by tenant (USD)"] canvas').waitFor({ timeout: UI_WAIT_MS });
      await page.screenshot({ path: join(ARTIFACTS, 'costs.png'), fullPage: true });
    } catch (error) {
      await page.screenshot({ path: join(ARTIFACTS, 'failure.png'), fullPage: true }).catch(() => undefined);
      throw new Error(`${String(error)}\n${stack.logs()}`, { cause: error });
    } finally {
      await page.close();
    }
  });

  it('switches read-only mode on and off, each after a confirmation', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const readOnlyNow = async () => (await stack.request<{ read_only: boolean }>('GET', '/admin/targets', undefined, { authorization: `Bearer ${ADMIN_TOKEN}` })).json.read_only;
    try {
      await signIn(page, ADMIN_TOKEN);
      await page.locator('nav a[data-tab="targets"]').click();
      await page.locator('button[data-action="read-only-on"]').click();
      const dialog = page.locator('dialog[open]');
      await expect(dialog.textContent()).resolves.toContain('Enter read-only mode?');
      await dialog.locator('button[data-action="confirm"]').click();
      await page.locator('p.read-only-banner[data-read-only="true"]').waitFor({ timeout: UI_WAIT_MS });
      await page.screenshot({ path: join(ARTIFACTS, 'targets-read-only.png'), fullPage: true });
      expect(await readOnlyNow()).toBe(true);

      await page.locator('button[data-action="read-only-off"]').click();
      await page.locator('dialog[open]').getByRole('button', { name: 'Cancel' }).click();
      expect(await readOnlyNow()).toBe(true);
      await page.locator('button[data-action="read-only-off"]').click();
      await page.locator('dialog[open] button[data-action="confirm"]').click();
      await page.locator('button[data-action="read-only-on"]').waitFor({ timeout: UI_WAIT_MS });
      expect(await page.locator('p.read-only-banner').count()).toBe(0);
      expect(await readOnlyNow()).toBe(false);
    } catch (error) {
      await page.screenshot({ path: join(ARTIFACTS, 'failure-read-only.png'), fullPage: true }).catch(() => undefined);
      throw new Error(`${String(error)}\n${stack.logs()}`, { cause: error });
    } finally {
      await page.close();
    }
  });

  it('answers the admin and job routes with the bodies /openapi.json documents', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const [job] = (await stack.request<{ jobs: Array<{ job_id: string }> }>('GET', '/admin/jobs', undefined, admin)).json.jobs;
    expect(job).toBeDefined();
    const calls: Array<[method: string, route: string, path: string, headers: Record<string, string>]> = [
      ['get', '/admin/jobs', '/admin/jobs?type=doc_review&limit=5', admin],
      ['get', '/admin/jobs/:id', `/admin/jobs/${job!.job_id}`, admin],
      ['get', '/admin/targets', '/admin/targets', admin],
      ['get', '/admin/queues', '/admin/queues', admin],
      ['get', '/admin/tasks', '/admin/tasks?status=success', admin],
      ['get', '/admin/costs', '/admin/costs', admin],
      ['get', '/admin/costs/series', '/admin/costs/series?by=tenant', admin],
      ['get', '/v1/jobs', '/v1/jobs', {}],
      ['get', '/v1/jobs/:id', `/v1/jobs/${job!.job_id}`, {}],
      ['get', '/healthz', '/healthz', {}],
    ];
    for (const [method, route, path, headers] of calls) {
      const spec = ROUTES.find((r) => r.method === method && r.path === route)!;
      const res = await stack.request('GET', path, undefined, headers);
      const schema = spec.responses[res.status]?.schema;
      expect({ path, status: res.status, documented: schema !== undefined }).toEqual({ path, status: 200, documented: true });
      const parsed = schema!.safeParse(res.json);
      expect({ path, issues: parsed.success ? [] : parsed.error.issues }).toEqual({ path, issues: [] });
    }
    const errors = await Promise.all([
      stack.request('GET', `/admin/jobs/${randomUUID()}`, undefined, admin),
      stack.request('GET', '/admin/jobs/not-a-job-id', undefined, admin),
      stack.request('GET', '/admin/jobs?status=finished', undefined, admin),
      stack.request('GET', '/admin/costs/series?by=model', undefined, admin),
      stack.request('GET', '/admin/jobs', undefined, { authorization: 'Bearer not-the-admin-token' }),
    ]);
    expect(errors.map((e) => e.status)).toEqual([404, 400, 400, 400, 401]);
    expect((errors[2]!.json as { error: { issues: Array<{ path: string }> } }).error.issues[0]?.path).toBe('query.status');
  });

  it('shows an error and no data for a wrong admin token', async () => {
    const page = await browser.newPage();
    try {
      await signIn(page, 'not-the-admin-token');
      await page.getByRole('alert').filter({ hasText: 'refused' }).waitFor({ timeout: UI_WAIT_MS });
      await expect(page.getByRole('alert').textContent()).resolves.toContain('401');
      expect(await page.locator('table, nav, section').count()).toBe(0);
      expect(await page.locator('input[name="token"]').count()).toBe(1);
      await page.screenshot({ path: join(ARTIFACTS, 'wrong-token.png') });
    } finally {
      await page.close();
    }
  });

  it('serves the API reference at /docs from local assets, rendering /openapi.json', async () => {
    const page = await browser.newPage();
    const external: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(stack.baseUrl)) external.push(request.url());
    });
    try {
      await page.goto(`${stack.baseUrl}/docs`);
      await page.locator('.swagger-ui .info .title', { hasText: 'Switchyard' }).waitFor({ timeout: UI_WAIT_MS });
      await page.locator('.opblock-summary-path', { hasText: '/admin/jobs/{id}' }).first().waitFor({ timeout: UI_WAIT_MS });
      expect(external).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
