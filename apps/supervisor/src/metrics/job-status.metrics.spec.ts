import { MetricsRegistry, type Logger } from '@switchyard/observability';
import type { JobStatsRepository } from '@switchyard/state';
import { JOB_COUNTS_TTL_MS, JobStatusMetrics } from './job-status.metrics';

const counts = { pending: 1, running: 2, success: 3, failed: 0, paused: 0, cancelled: 0 };

function setup() {
  const registry = new MetricsRegistry();
  const countJobsByStatus = jest.fn(async () => ({ ...counts }));
  const countRunningJobsByTenant = jest.fn(async () => new Map([['acme', 2]]));
  const countStaleTasks = jest.fn(async (_staleAfterMs: number) => 1);
  const warn = jest.fn();
  const metrics = new JobStatusMetrics(registry, { countJobsByStatus, countRunningJobsByTenant, countStaleTasks } as unknown as JobStatsRepository, { warn } as unknown as Logger, {
    STALE_AFTER_MS: 15_000,
  });
  let now = 1_000_000;
  metrics.now = () => now;
  return { registry, metrics, countJobsByStatus, countStaleTasks, warn, advance: (ms: number) => (now += ms) };
}

describe('JobStatusMetrics', () => {
  it('reads the counts once per TTL, and once for concurrent scrapes', async () => {
    const { registry, metrics, countJobsByStatus, advance } = setup();
    await Promise.all([metrics.refreshIfStale(), metrics.refreshIfStale()]);
    expect(countJobsByStatus).toHaveBeenCalledTimes(1);
    expect(await registry.render()).toContain('switchyard_jobs{status="running"} 2\n');
    expect(await registry.render()).toContain('switchyard_running_jobs{tenant="acme"} 2\n');
    expect(await registry.render()).toContain('switchyard_tasks_stale 1\n');

    advance(JOB_COUNTS_TTL_MS - 1);
    await metrics.refreshIfStale();
    expect(countJobsByStatus).toHaveBeenCalledTimes(1);
    advance(1);
    await metrics.refreshIfStale();
    expect(countJobsByStatus).toHaveBeenCalledTimes(2);
  });

  it('keeps the last counts when the database fails, and shows their age', async () => {
    const { registry, metrics, countJobsByStatus, warn, advance } = setup();
    await metrics.refreshIfStale();
    countJobsByStatus.mockRejectedValueOnce(new Error('connection refused'));
    advance(JOB_COUNTS_TTL_MS + 2_000);
    await expect(metrics.refreshIfStale()).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledTimes(1);
    const text = await registry.render();
    expect(text).toContain('switchyard_jobs{status="success"} 3\n');
    expect(text).toContain('switchyard_job_counts_age_seconds 7\n');
  });

  it('shows no job samples before the first successful read', async () => {
    const { registry } = setup();
    expect(await registry.render()).not.toMatch(/^switchyard_jobs\{/m);
  });
});
