import { MetricsRegistry, parsePrometheusText, sampleValue } from '@switchyard/observability';
import type { Router } from '@switchyard/router';
import { WorkerMetrics, queueWaitSeconds } from './worker-metrics';

describe('queueWaitSeconds', () => {
  it('counts from when the job was due (added plus its delay) to when processing started', () => {
    expect(queueWaitSeconds({ timestamp: 10_000, delay: 0, processedOn: 12_500 }, 99_999)).toBe(2.5);
    expect(queueWaitSeconds({ timestamp: 10_000, delay: 2_000, processedOn: 12_500 }, 99_999)).toBe(0.5);
    expect(queueWaitSeconds({ timestamp: 10_000, delay: 0, processedOn: undefined }, 11_000)).toBe(1);
    expect(queueWaitSeconds({ timestamp: 10_000, delay: 0, processedOn: 9_000 }, 0)).toBe(0);
  });
});

describe('WorkerMetrics', () => {
  it('records queue wait, task and step durations as histograms and the router targets as gauges', async () => {
    const registry = new MetricsRegistry();
    const router = {
      snapshot: () => [{ name: 'local_vllm_7b', type: 'local', breaker: 'open', score: 42, share: 0.3, inFlight: 2 }],
      readOnly: false,
      networkStatus: () => ({ state: 'ok', alerts: 0 }),
      coalescingStats: () => ({ leaders: 0, followers: 0 }),
    } as unknown as Router;
    const metrics = new WorkerMetrics(registry, router);
    metrics.taskTaken('extract', { timestamp: 0, delay: 0, processedOn: 300 }, 0);
    metrics.taskRan('extract', 'completed', 4);
    metrics.stepRan({ role: 'extract', kind: 'call', outcome: 'ok', seconds: 3 });

    const parsed = parsePrometheusText(await registry.render());
    expect(sampleValue(parsed, 'switchyard_queue_wait_seconds_bucket', { role: 'extract', le: '0.5' })).toBe(1);
    expect(sampleValue(parsed, 'switchyard_task_duration_seconds_count', { role: 'extract', outcome: 'completed' })).toBe(1);
    expect(sampleValue(parsed, 'switchyard_step_duration_seconds_sum', { role: 'extract', kind: 'call', outcome: 'ok' })).toBe(3);
    const target = { target: 'local_vllm_7b', target_type: 'local' };
    expect(sampleValue(parsed, 'switchyard_breaker_state', { ...target, state: 'open' })).toBe(1);
    expect(sampleValue(parsed, 'switchyard_breaker_state', { ...target, state: 'closed' })).toBe(0);
    expect(sampleValue(parsed, 'switchyard_target_health_score', target)).toBe(42);
    expect(sampleValue(parsed, 'switchyard_target_share', target)).toBe(0.3);
    expect(sampleValue(parsed, 'switchyard_target_in_flight', target)).toBe(2);
  });
});
