import type { AdminApi } from './api';
import { lineChart } from './chart';
import { confirmAction, h, statusBadge } from './dom';
import { bucketTimes, formatMs, formatPercent, formatUsd, localCloudShare, seriesByKey, trafficTotals, type CostPoint } from './series';
import type { AdminJob, JobListItem, JobTask, LedgerGroup, QueueCounts, Target } from './types';

export interface View {
  /** Builds the view's content from fresh data; called again on every live refresh. */
  render(api: AdminApi): Promise<HTMLElement>;
}

const TASK_STATUSES = ['', 'pending', 'running', 'success', 'failed', 'paused', 'cancelled', 'skipped', 'queued'];

/** Filters live in the URL hash (`#/jobs?status=running`), so a refresh keeps them and a link shares them. */
export function jobsView(filters: URLSearchParams, navigate: (hash: string) => void): View {
  const apply = (form: HTMLFormElement) => {
    const next = new URLSearchParams();
    for (const [key, value] of new FormData(form)) if (typeof value === 'string' && value !== '') next.set(key, value);
    navigate(`#/jobs?${next.toString()}`);
  };
  return {
    async render(api) {
      const page = await api.get<{ jobs: JobListItem[]; next_cursor: string | null }>('/admin/jobs', {
        status: filters.get('status') ?? undefined,
        type: filters.get('type') ?? undefined,
        tenant: filters.get('tenant') ?? undefined,
        limit: 50,
      });
      const form = h(
        'form',
        { class: 'filters', 'aria-label': 'Job filters' },
        h('label', {}, 'Status ', h('select', { name: 'status' }, TASK_STATUSES.map((s) => h('option', { value: s, selected: (filters.get('status') ?? '') === s }, s || 'any')))),
        h('label', {}, 'Type ', h('input', { name: 'type', value: filters.get('type') ?? '', placeholder: 'doc_review' })),
        h('label', {}, 'Tenant ', h('input', { name: 'tenant', value: filters.get('tenant') ?? '', placeholder: 'any' })),
        h('button', { type: 'submit' }, 'Filter'),
      );
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        apply(form);
      });
      return h(
        'section',
        { 'aria-label': 'Jobs' },
        h('h2', {}, 'Jobs'),
        form,
        page.jobs.length === 0
          ? h('p', { class: 'empty' }, 'No jobs match.')
          : h(
              'table',
              { class: 'jobs' },
              h('thead', {}, h('tr', {}, ['job', 'tenant', 'type', 'status', 'progress', 'cost', 'created', 'error'].map((c) => h('th', {}, c)))),
              h(
                'tbody',
                {},
                page.jobs.map((job) =>
                  h(
                    'tr',
                    { 'data-job-id': job.job_id },
                    h('td', {}, h('a', { href: `#/jobs/${job.job_id}`, class: 'mono' }, job.job_id.slice(0, 8))),
                    h('td', {}, job.tenant_id),
                    h('td', {}, job.type),
                    h('td', {}, statusBadge(job.status)),
                    h('td', {}, `${job.progress.completed}/${job.progress.total}`),
                    h('td', {}, formatUsd(job.cost?.usd)),
                    h('td', {}, new Date(job.created_at).toLocaleTimeString()),
                    h('td', { class: 'error' }, job.error?.message ?? ''),
                  ),
                ),
              ),
            ),
      );
    },
  };
}

function taskDepth(task: JobTask, byId: Map<string, JobTask>): number {
  let depth = 0;
  for (let parent = task.parent_task_id; parent && byId.has(parent); parent = byId.get(parent)!.parent_task_id) depth += 1;
  return depth;
}

function taskCard(task: JobTask, depth: number): HTMLElement {
  const calls = task.attempts.length > 0 ? task.attempts : task.route_targets.map((r) => ({ ...r, target_type: '', error_class: r.error ?? null, cost_usd: NaN, trace_id: null, at: '' }));
  return h(
    'article',
    { class: `task status-${task.status}`, 'data-task-id': task.task_id, 'data-role': task.role, style: `margin-left:${depth * 24}px` },
    h(
      'header',
      {},
      h('strong', {}, task.agent_id),
      ' ',
      h('span', { class: 'muted' }, task.role),
      ' ',
      statusBadge(task.status),
      task.optional ? h('span', { class: 'badge optional' }, task.status === 'skipped' ? 'optional · skipped' : 'optional') : null,
      task.depends_on && task.depends_on.length > 0 ? h('span', { class: 'muted' }, ` after ${task.depends_on.join(', ')}`) : null,
    ),
    h(
      'dl',
      {},
      h('dt', {}, 'steps'),
      h('dd', {}, `${task.current_step}/${task.total_steps}`),
      h('dt', {}, 'duration'),
      h('dd', {}, formatMs(task.duration_ms)),
      h('dt', {}, 'retries'),
      h('dd', {}, String(task.retry_count)),
      h('dt', {}, 'cost'),
      h('dd', {}, formatUsd(task.cost_usd)),
    ),
    task.steps.length > 0 ? h('ol', { class: 'steps' }, task.steps.map((s) => h('li', {}, `${s.name} ✓`))) : null,
    calls.length > 0
      ? h(
          'table',
          { class: 'calls' },
          h('thead', {}, h('tr', {}, ['step', 'target', 'model', 'rule', 'outcome', 'latency', 'cost', 'trace'].map((c) => h('th', {}, c)))),
          h(
            'tbody',
            {},
            calls.map((c) =>
              h(
                'tr',
                { class: `outcome-${c.outcome}` },
                h('td', {}, c.step ?? ''),
                h('td', {}, c.target),
                h('td', {}, c.model),
                h('td', {}, c.rule),
                h('td', {}, c.error_class ? `${c.outcome} (${c.error_class})` : c.outcome),
                h('td', {}, formatMs(c.latency_ms)),
                h('td', {}, Number.isNaN(c.cost_usd) ? '—' : formatUsd(c.cost_usd)),
                h('td', { class: 'mono' }, c.trace_id ? c.trace_id.slice(0, 12) : ''),
              ),
            ),
          ),
        )
      : null,
    task.error ? h('p', { class: 'error' }, `${task.error.code}: ${task.error.message}`) : null,
  );
}

export function jobView(jobId: string): View {
  return {
    async render(api) {
      const job = await api.get<AdminJob>(`/admin/jobs/${encodeURIComponent(jobId)}`);
      const byId = new Map(job.tasks.map((t) => [t.task_id, t]));
      return h(
        'section',
        { 'aria-label': 'Job', 'data-job-id': job.job_id },
        h('p', {}, h('a', { href: '#/jobs' }, '← jobs')),
        h('h2', {}, `Job ${job.job_id}`, ' ', statusBadge(job.status)),
        h(
          'dl',
          { class: 'summary' },
          h('dt', {}, 'type'),
          h('dd', {}, job.type),
          h('dt', {}, 'tenant'),
          h('dd', {}, job.tenant_id),
          h('dt', {}, 'progress'),
          h('dd', {}, `${job.progress.completed}/${job.progress.total}`),
          h('dt', {}, 'duration'),
          h('dd', {}, formatMs(job.duration_ms)),
          h('dt', {}, 'cost'),
          h('dd', {}, formatUsd(job.cost?.usd)),
          h('dt', {}, 'trace'),
          h('dd', { class: 'mono', 'data-trace-ids': job.trace_ids.join(',') }, job.trace_ids.length > 0 ? job.trace_ids.join(', ') : '—'),
        ),
        job.error ? h('p', { class: 'error' }, `${job.error.code}: ${job.error.message}`) : null,
        h('h3', {}, 'Tasks'),
        h('div', { class: 'tree' }, job.tasks.map((task) => taskCard(task, taskDepth(task, byId)))),
      );
    },
  };
}

export function targetsView(refresh: () => void, report: (message: string) => void): View {
  const act = async (api: AdminApi, question: string, work: () => Promise<unknown>) => {
    if (!(await confirmAction(question))) return;
    try {
      await work();
    } catch (error) {
      report(error instanceof Error ? error.message : String(error));
    }
    refresh();
  };
  return {
    async render(api) {
      const now = new Date();
      const since = new Date(now.getTime() - 3_600_000);
      const [{ targets, read_only: readOnly }, ledger, series] = await Promise.all([
        api.get<{ targets: Target[]; read_only: boolean }>('/admin/targets'),
        api.get<{ groups: LedgerGroup[] }>('/admin/costs', { group_by: 'target', since: since.toISOString(), until: now.toISOString() }),
        api.get<{ points: CostPoint[]; bucket_seconds: number }>('/admin/costs/series', { by: 'target', bucket_seconds: 60, since: since.toISOString(), until: now.toISOString() }),
      ]);
      const totals = trafficTotals(series.points);
      const lastHour = new Map(ledger.groups.map((g) => [g.key, g]));
      const times = bucketTimes(since, now, series.bucket_seconds);
      return h(
        'section',
        { 'aria-label': 'Targets' },
        h('h2', {}, 'Targets'),
        readOnly
          ? h('p', { class: 'read-only-banner', 'data-read-only': 'true' }, 'Read-only mode: no model calls are made; the gateway serves cached answers only and durable jobs wait.')
          : null,
        h(
          'p',
          {},
          h('button', { type: 'button', 'data-action': 'clear-force', onclick: () => void act(api, 'Return to normal routing (no forced primary)?', () => api.post('/admin/routing/force-primary', { target: null })) }, 'Clear forced primary'),
          ' ',
          readOnly
            ? h('button', { type: 'button', 'data-action': 'read-only-off', onclick: () => void act(api, 'Leave read-only mode? Model calls resume in every process.', () => api.post('/admin/read-only', { enabled: false })) }, 'Leave read-only mode')
            : h(
                'button',
                {
                  type: 'button',
                  'data-action': 'read-only-on',
                  class: 'danger',
                  onclick: () =>
                    void act(api, 'Enter read-only mode? No model calls are made in any process: the gateway answers from its cache only (503 otherwise) and durable jobs wait.', () =>
                      api.post('/admin/read-only', { enabled: true }),
                    ),
                },
                'Read-only mode',
              ),
        ),
        h(
          'table',
          { class: 'targets' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['target', 'type', 'state', 'breaker', 'health', 'share', 'in flight', 'p50 (1 h)', 'p95 (1 h)', 'error rate (1 h)', 'calls (1 h)', 'overrides', 'actions'].map((c) => h('th', {}, c)),
            ),
          ),
          h(
            'tbody',
            {},
            targets.map((t) => {
              const hour = lastHour.get(t.name);
              return h(
                'tr',
                { 'data-target': t.name, 'data-drained': String(t.drained) },
                h('td', {}, h('strong', {}, t.name), h('div', { class: 'muted' }, t.model)),
                h('td', {}, t.type),
                h('td', {}, statusBadge(t.state)),
                h('td', {}, statusBadge(t.breaker)),
                h('td', {}, String(Math.round(t.score))),
                h('td', { title: 'recovery step 10 → 30 → 60 → 100 %' }, `${t.share} %`),
                h('td', { title: 'every process of the fleet' }, `${t.fleet?.aggregate.totalInFlight ?? t.inFlight}/${t.maxConcurrency}`),
                h('td', {}, formatMs(hour?.latency_p50_ms)),
                h('td', {}, formatMs(hour?.latency_p95_ms)),
                h('td', {}, hour && hour.calls > 0 ? formatPercent(hour.errors / hour.calls) : '—'),
                h('td', {}, String(hour?.calls ?? 0)),
                h('td', { class: 'overrides' }, [t.drained ? 'drained' : '', t.forcedPrimary ? 'forced primary' : ''].filter(Boolean).join(', ') || '—'),
                h(
                  'td',
                  {},
                  t.drained
                    ? h('button', { type: 'button', 'data-action': 'enable', onclick: () => void act(api, `Enable ${t.name}? It takes new calls again.`, () => api.post(`/admin/targets/${encodeURIComponent(t.name)}/enable`)) }, 'Enable')
                    : h('button', { type: 'button', 'data-action': 'drain', class: 'danger', onclick: () => void act(api, `Drain ${t.name}? It takes no new calls until enabled, in every process.`, () => api.post(`/admin/targets/${encodeURIComponent(t.name)}/drain`)) }, 'Drain'),
                  ' ',
                  h('button', { type: 'button', 'data-action': 'force-primary', onclick: () => void act(api, `Force ${t.name} as the primary target? Sensitive calls still only go to local targets.`, () => api.post('/admin/routing/force-primary', { target: t.name })) }, 'Force primary'),
                ),
              );
            }),
          ),
        ),
        h('h3', {}, 'Local vs cloud traffic, last hour'),
        h('p', { 'data-local-share': totals.localShare ?? '' }, `local ${totals.local} calls, cloud ${totals.cloud} calls — local share ${totals.localShare === null ? '—' : `${totals.localShare} %`}`),
        lineChart('share of calls (%)', localCloudShare(series.points, times), { unit: '%', max: 100 }),
      );
    },
  };
}

export function queuesView(): View {
  const columns = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'];
  return {
    async render(api) {
      const { queues } = await api.get<{ queues: QueueCounts[] }>('/admin/queues');
      return h(
        'section',
        { 'aria-label': 'Queues' },
        h('h2', {}, 'Queues'),
        h(
          'table',
          {},
          h('thead', {}, h('tr', {}, [h('th', {}, 'queue'), ...columns.map((c) => h('th', {}, c))])),
          h('tbody', {}, queues.map((q) => h('tr', { 'data-queue': q.queue }, h('td', {}, q.queue), columns.map((c) => h('td', {}, String(q.counts[c] ?? 0)))))),
        ),
      );
    },
  };
}

export function costsView(hours: number, navigate: (hash: string) => void): View {
  return {
    async render(api) {
      const now = new Date();
      const since = new Date(now.getTime() - hours * 3_600_000);
      const bucketSeconds = hours <= 1 ? 60 : hours <= 24 ? 900 : 3_600;
      const window = { since: since.toISOString(), until: now.toISOString(), bucket_seconds: bucketSeconds };
      const [byTarget, byTenant] = await Promise.all([
        api.get<{ points: CostPoint[] }>('/admin/costs/series', { by: 'target', ...window }),
        api.get<{ points: CostPoint[] }>('/admin/costs/series', { by: 'tenant', ...window }),
      ]);
      const times = bucketTimes(since, now, bucketSeconds);
      const total = byTarget.points.reduce((sum, p) => sum + p.cost_usd, 0);
      return h(
        'section',
        { 'aria-label': 'Costs' },
        h('h2', {}, 'Costs'),
        h('p', {}, [1, 24, 168].map((w) => h('button', { type: 'button', class: w === hours ? 'active' : '', onclick: () => navigate(`#/costs?hours=${w}`) }, w === 168 ? '7 days' : `${w} h`)), ` total ${formatUsd(total)}`),
        h('div', { class: 'charts' }, lineChart('cost by target (USD)', seriesByKey(byTarget.points, times, 'cost_usd'), { unit: 'USD' }), lineChart('cost by tenant (USD)', seriesByKey(byTenant.points, times, 'cost_usd'), { unit: 'USD' })),
      );
    },
  };
}
