import { loadavg } from 'node:os';
import { Client } from 'pg';
import { ManagedProcess, freePort } from '@switchyard/devkit';
import { TASKS_PER_JOB_AVERAGE, generateJobs } from './rows-1m/generate-rows';
import { sweeperPlans, type StatementPlan } from './rows-1m/sweeper-plans';
import { Cleanup, REDIS_URL, benchPrefix, createBenchDatabase, deleteKeys } from './support/resources';
import { fixed, heading, percentile, table, verdict } from './support/report';

/**
 * The read paths at 1,000,000 task rows: a fresh database (the real migrations) is filled by
 * set-based SQL (`rows-1m/generate-rows.ts`) to a tenth of the size and then to the full size;
 * at both sizes the sweeper's statements are run under EXPLAIN (ANALYZE, BUFFERS); at the full
 * size a real supervisor (sweeper off, so the stale tasks stay as generated) answers the job
 * list, job view and admin task list, each timed from a keep-alive client, sequentially.
 * `BENCH_ROWS` changes the task count (default 1,000,000). The database is dropped at the end,
 * however the bench ends.
 */

export const ROWS_TARGETS_MS = { list: 50, detail: 10, stale: 50 } as const;
const TASK_ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const WARMUP = 20;
const SAMPLES = Number(process.env.BENCH_ROWS_SAMPLES ?? 200);
/** A probe stops after this long (with at least MIN_SAMPLES timed): a request of seconds has missed its target anyway. */
const PROBE_BUDGET_MS = Number(process.env.BENCH_ROWS_PROBE_S ?? 20) * 1000;
const MIN_SAMPLES = 10;
const BIG_TENANT = 'tenant-00';
const SMALL_TENANT = 'tenant-39';
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const apiKey = (tenant: string) => `sk-bench-${tenant}-0123456789`;

interface Probe {
  name: string;
  /** None: a floor measured beside the others (what any request costs on this machine now). */
  targetMs?: number;
  /** The i-th request: path and bearer token. */
  request: (i: number) => { path: string; token: string };
}

export interface RowsSummary {
  pass: boolean;
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

/** The list cursor as the API encodes it (`apps/supervisor/src/jobs/job-list.query.ts`). */
const cursorOf = (createdAt: Date, taskId: string) => Buffer.from(JSON.stringify({ c: createdAt.toISOString(), id: taskId })).toString('base64url');

async function timeProbe(port: number, probe: Probe): Promise<number[]> {
  const get = async (i: number) => {
    const { path, token } = probe.request(i);
    const sent = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${probe.name}: GET ${path} answered ${res.status}: ${body.slice(0, 300)}`);
    return performance.now() - sent;
  };
  const started = performance.now();
  const spent = () => performance.now() - started;
  let i = 0;
  for (; i < WARMUP && spent() < PROBE_BUDGET_MS / 4; i += 1) await get(i);
  const samples: number[] = [];
  for (; i < WARMUP + SAMPLES && (samples.length < MIN_SAMPLES || spent() < PROBE_BUDGET_MS); i += 1) samples.push(await get(i));
  return samples;
}

function printPlans(label: string, plans: StatementPlan[]): void {
  for (const plan of plans) console.log(`-- ${plan.name} (${label})\n${plan.text}\n`);
}

/** Index scans only, and at most twice the buffers at ten times the rows: the statement's cost follows its LIMIT, not the table. */
function plansHold(small: StatementPlan[], large: StatementPlan[]): { rows: string[][]; pass: boolean } {
  let pass = true;
  const rows = large.map((plan) => {
    const before = small.find((p) => p.name === plan.name);
    const indexOnly = plan.scans.every((s) => s.includes('Index')) && (before?.scans.every((s) => s.includes('Index')) ?? false);
    const bounded = before !== undefined && plan.buffers <= Math.max(2 * before.buffers, before.buffers + 20);
    pass &&= indexOnly && bounded;
    return [
      plan.name,
      [...new Set(plan.scans)].join(', '),
      `${fixed(before?.totalCost ?? Number.NaN, 1)} → ${fixed(plan.totalCost, 1)}`,
      `${fixed(before?.buffers ?? Number.NaN)} → ${fixed(plan.buffers)}`,
      `${fixed(before?.actualMs ?? Number.NaN, 2)} → ${fixed(plan.actualMs, 2)}`,
      verdict(indexOnly && bounded),
    ];
  });
  return { rows, pass };
}

export async function runRowsBench(): Promise<RowsSummary> {
  const jobs = Math.round(TASK_ROWS / TASKS_PER_JOB_AVERAGE);
  const firstStageJobs = Math.round(jobs / 10);
  heading(`reads at ${fixed(TASK_ROWS)} task rows (job list, job view, stale tasks, sweeper plans)`);
  const cleanup = new Cleanup();
  const onSignal = () => void cleanup.runAll().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const dbUrl = await createBenchDatabase(cleanup);
    const client = new Client({ connectionString: dbUrl, application_name: 'sy-bench-rows' });
    await client.connect();
    cleanup.add('generator connection', () => client.end());

    const generate = async (first: number, last: number) => {
      const started = Date.now();
      await generateJobs(client, first, last, (done) => process.stdout.write(`  ${fixed(done)} / ${fixed(last - first + 1)} jobs\r`));
      const { rows } = await client.query<{ tasks: string; roots: string; size: string }>(
        `select (select sum(size) from bench_jobs) as tasks, (select count(*) from bench_jobs) as roots, pg_size_pretty(pg_total_relation_size('agent_task_state')) as size`,
      );
      console.log(`generated to ${fixed(Number(rows[0]!.tasks))} task rows + ${fixed(Number(rows[0]!.roots))} job roots (${rows[0]!.size} with indexes) in ${fixed((Date.now() - started) / 1000, 1)} s, load ${load()}`);
    };
    await generate(1, firstStageJobs);
    const smallPlans = await sweeperPlans(dbUrl);
    await generate(firstStageJobs + 1, jobs);
    const largePlans = await sweeperPlans(dbUrl);
    const { rows: mix } = await client.query<{ status: string; root: boolean; n: string; stale: string }>(`
      select status, parent_task_id is null as root, count(*) as n,
        count(*) filter (where status = 'running' and parent_task_id is not null and updated_at < now() - interval '8 seconds') as stale
      from agent_task_state group by 1, 2 order by 2 desc, 3 desc`);
    console.log(`\nstatus mix: ${mix.map((r) => `${r.root ? 'jobs' : 'tasks'} ${r.status} ${fixed(Number(r.n))}`).join(', ')}; stale running tasks ${fixed(mix.reduce((s, r) => s + Number(r.stale), 0))}`);

    heading(`the sweeper's statements at ${fixed(TASK_ROWS / 10)} and ${fixed(TASK_ROWS)} task rows (EXPLAIN ANALYZE, BUFFERS)`);
    printPlans(`${fixed(TASK_ROWS / 10)} task rows`, smallPlans);
    printPlans(`${fixed(TASK_ROWS)} task rows`, largePlans);
    const plans = plansHold(smallPlans, largePlans);
    console.log(table(['statement', 'scans', 'est. cost', 'buffers', 'ms', 'bounded'], plans.rows, ['left', 'left', 'right', 'right', 'right', 'left']));

    const sample = async (sql: string, params: unknown[] = []) => (await client.query<{ task_id: string; tenant_id: string; created_at: Date }>(sql, params)).rows;
    const details = await sample(`select job_id as task_id, tenant_id, created_at from bench_jobs order by md5(j::text || 'detail') limit ${WARMUP + SAMPLES}`);
    const cursors = await sample(
      `select a.task_id, a.tenant_id, a.created_at from bench_jobs b join agent_task_state a on a.task_id = b.job_id where b.tenant_id = $1 order by md5(b.j::text || 'cursor') limit ${WARMUP + SAMPLES}`,
      [BIG_TENANT],
    );
    const tenants = [...new Set((await sample('select distinct tenant_id from bench_jobs')).map((r) => r.tenant_id))];

    const prefix = benchPrefix();
    cleanup.add('queue keys', async () => void (await deleteKeys(`${prefix}:`)));
    const port = await freePort();
    const supervisor = ManagedProcess.start('supervisor', {
      DATABASE_URL: dbUrl,
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      PORT: String(port),
      LOG_LEVEL: 'info',
      SWEEPER_ENABLED: 'false',
      ADMIN_TOKEN,
      API_KEYS: tenants.map((t) => `${t}:${apiKey(t)}`).join(','),
    });
    cleanup.add('supervisor', () => supervisor.stop());
    await supervisor.waitForLine(/supervisor listening/, 60_000);

    const tenantList = (tenant: string, query = '') => () => ({ path: `/v1/jobs${query}`, token: apiKey(tenant) });
    const admin = (path: string) => () => ({ path, token: ADMIN_TOKEN });
    const probes: Probe[] = [
      { name: 'floor: GET /healthz (no query)', request: () => ({ path: '/healthz', token: ADMIN_TOKEN }) },
      { name: `GET /v1/jobs (${BIG_TENANT}, ~30 % of jobs)`, targetMs: ROWS_TARGETS_MS.list, request: tenantList(BIG_TENANT) },
      { name: `GET /v1/jobs (${SMALL_TENANT}, <1 % of jobs)`, targetMs: ROWS_TARGETS_MS.list, request: tenantList(SMALL_TENANT) },
      ...['running', 'queued', 'failed', 'success'].map((status) => ({
        name: `GET /v1/jobs?status=${status} (${BIG_TENANT})`,
        targetMs: ROWS_TARGETS_MS.list,
        request: tenantList(BIG_TENANT, `?status=${status}`),
      })),
      {
        name: `GET /v1/jobs?cursor=<random page> (${BIG_TENANT})`,
        targetMs: ROWS_TARGETS_MS.list,
        request: (i) => ({ path: `/v1/jobs?cursor=${cursorOf(cursors[i]!.created_at, cursors[i]!.task_id)}`, token: apiKey(BIG_TENANT) }),
      },
      {
        name: `GET /v1/jobs?status=success&cursor=<random page> (${BIG_TENANT})`,
        targetMs: ROWS_TARGETS_MS.list,
        request: (i) => ({ path: `/v1/jobs?status=success&cursor=${cursorOf(cursors[i]!.created_at, cursors[i]!.task_id)}`, token: apiKey(BIG_TENANT) }),
      },
      { name: 'GET /v1/jobs/:id (random job, its tenant)', targetMs: ROWS_TARGETS_MS.detail, request: (i) => ({ path: `/v1/jobs/${details[i]!.task_id}`, token: apiKey(details[i]!.tenant_id) }) },
      { name: 'GET /admin/tasks?stale=true', targetMs: ROWS_TARGETS_MS.stale, request: admin('/admin/tasks?stale=true') },
      { name: 'GET /admin/tasks (stale or resumed, unfinished)', targetMs: ROWS_TARGETS_MS.stale, request: admin('/admin/tasks') },
      { name: 'GET /admin/tasks?resumed=true', targetMs: ROWS_TARGETS_MS.stale, request: admin('/admin/tasks?resumed=true') },
      { name: 'GET /admin/tasks?status=failed', targetMs: ROWS_TARGETS_MS.stale, request: admin('/admin/tasks?status=failed') },
      { name: 'GET /admin/jobs (every tenant)', targetMs: ROWS_TARGETS_MS.list, request: admin('/admin/jobs') },
      { name: 'GET /admin/jobs?status=queued', targetMs: ROWS_TARGETS_MS.list, request: admin('/admin/jobs?status=queued') },
      { name: 'GET /admin/jobs?type=goal', targetMs: ROWS_TARGETS_MS.list, request: admin('/admin/jobs?type=goal') },
      { name: `GET /admin/jobs?tenant=${SMALL_TENANT}&status=failed`, targetMs: ROWS_TARGETS_MS.list, request: admin(`/admin/jobs?tenant=${SMALL_TENANT}&status=failed`) },
      {
        name: 'GET /admin/jobs?cursor=<random page>',
        targetMs: ROWS_TARGETS_MS.list,
        request: (i) => ({ path: `/admin/jobs?cursor=${cursorOf(cursors[i]!.created_at, cursors[i]!.task_id)}`, token: ADMIN_TOKEN }),
      },
    ];

    heading(`HTTP at ${fixed(TASK_ROWS)} task rows: ${SAMPLES} sequential requests per probe (at most ${PROBE_BUDGET_MS / 1000} s) after ${WARMUP} untimed`);
    console.log(`load average before: ${load()}`);
    let pass = plans.pass;
    const rows: string[][] = [];
    for (const probe of probes) {
      const samples = await timeProbe(port, probe);
      const p95 = percentile(samples, 95);
      const met = probe.targetMs === undefined || p95 <= probe.targetMs;
      pass &&= met;
      const target = probe.targetMs === undefined ? ['', ''] : [`≤ ${probe.targetMs}`, verdict(met)];
      rows.push([probe.name, fixed(samples.length), fixed(percentile(samples, 50), 1), fixed(p95, 1), fixed(Math.max(...samples), 1), ...target]);
      console.log(`  ${rows.at(-1)!.join('  ')}`);
    }
    console.log(`\n${table(['request', 'n', 'p50 ms', 'p95 ms', 'max ms', 'target p95', ''], rows)}`);
    console.log(`load average after: ${load()}`);
    console.log(`\nrows-1m: ${verdict(pass)} (sweeper plans bounded: ${verdict(plans.pass)})`);
    return { pass };
  } finally {
    await cleanup.runAll();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}
