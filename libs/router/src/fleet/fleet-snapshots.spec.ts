import type { FleetRedisClient } from './fleet-redis';
import { createLogger } from '@switchyard/observability';
import type { TargetSnapshot } from '../admin/router-admin';
import { RouterSnapshotPublisher, aggregateTarget, buildFleetView, fleetSnapshotKey, type RouterSnapshotReport } from './fleet-snapshots';

const target = (name: string, over: Partial<TargetSnapshot> = {}): TargetSnapshot => ({
  name,
  type: 'local',
  model: 'm',
  endpoint: 'http://x',
  state: 'available',
  breaker: 'closed',
  score: 100,
  share: 100,
  inFlight: 0,
  maxConcurrency: 8,
  latencyMs: { p50: null, p95: null },
  firstTokenMs: { p50: null, p95: null, mean5m: null },
  errorRate: 0,
  requests: 0,
  drained: false,
  forcedPrimary: false,
  weights: [],
  canary: null,
  ...over,
});

const report = (processId: string, role: 'supervisor' | 'worker', reportedAt: number, targets: TargetSnapshot[]): RouterSnapshotReport => ({ processId, role, reportedAt, targets });

describe('fleet view', () => {
  it('aggregates a target over processes: min score, any open breaker, total in-flight, worst error rate', () => {
    const view = buildFleetView(
      [
        report('worker:a', 'worker', 9_000, [target('t7', { score: 70, inFlight: 2, errorRate: 0.1 }), target('cloud', { type: 'cloud' })]),
        report('worker:b', 'worker', 8_000, [target('t7', { score: 40, inFlight: 3, errorRate: 0.5, breaker: 'open', drained: true })]),
      ],
      10_000,
      report('supervisor:s', 'supervisor', 10_000, [target('t7', { inFlight: 1 })]),
    );
    const t7 = view.get('t7')!;
    expect(t7.processes.map((p) => [p.processId, p.role, p.ageMs])).toEqual([
      ['supervisor:s', 'supervisor', 0],
      ['worker:a', 'worker', 1_000],
      ['worker:b', 'worker', 2_000],
    ]);
    expect(t7.aggregate).toEqual({ processes: 3, minScore: 40, anyBreakerOpen: true, totalInFlight: 6, worstErrorRate: 0.5, drainedIn: 1, canaryFailingIn: 0 });
    expect(view.get('cloud')!.aggregate).toEqual({ processes: 1, minScore: 100, anyBreakerOpen: false, totalInFlight: 0, worstErrorRate: 0, drainedIn: 0, canaryFailingIn: 0 });
  });

  it("replaces the caller's stored report with its live one", () => {
    const view = buildFleetView([report('supervisor:s', 'supervisor', 1_000, [target('t', { score: 10 })])], 5_000, report('supervisor:s', 'supervisor', 5_000, [target('t', { score: 90 })]));
    expect(view.get('t')!.processes).toHaveLength(1);
    expect(view.get('t')!.aggregate.minScore).toBe(90);
  });

  it('has an empty aggregate for no reports and never a negative age', () => {
    expect(aggregateTarget([])).toEqual({ processes: 0, minScore: null, anyBreakerOpen: false, totalInFlight: 0, worstErrorRate: 0, drainedIn: 0, canaryFailingIn: 0 });
    expect(buildFleetView([report('w', 'worker', 2_000, [target('t')])], 1_000).get('t')!.processes[0]!.ageMs).toBe(0);
  });
});

describe('RouterSnapshotPublisher', () => {
  it('shares no credential of an endpoint with the fleet', async () => {
    const written = new Map<string, string>();
    const multi = {
      set: (key: string, value: string) => (written.set(key, value), multi),
      zadd: () => multi,
      zremrangebyscore: () => multi,
      exec: () => Promise.resolve([]),
    };
    const publisher = new RouterSnapshotPublisher({
      processId: 'worker:w',
      role: 'worker',
      router: { snapshot: () => [target('t', { endpoint: 'https://user:secret@api.example.com/v1' })], healthReport: () => [], applyFleetHealth: () => undefined },
      redis: { multi: () => multi, zremrangebyscore: () => Promise.resolve(0), zrange: () => Promise.resolve([]) } as unknown as FleetRedisClient,
      keyPrefix: 'p:',
      logger: createLogger('router-fleet-spec', 'silent'),
      now: () => 1_000,
    });
    await publisher.publish();
    const stored = written.get(fleetSnapshotKey('p:', 'worker:w'));
    expect(stored).not.toContain('secret');
    expect((JSON.parse(stored!) as RouterSnapshotReport).targets[0]!.endpoint).toBe('https://***@api.example.com/v1');
  });
});
