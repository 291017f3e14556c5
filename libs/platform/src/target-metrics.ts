import type { MetricsRegistry } from '@switchyard/observability';
import type { BreakerState, NetworkStatus, RouterAdmin } from '@switchyard/router';

const BREAKER_STATES: readonly BreakerState[] = ['closed', 'half_open', 'open'];

/**
 * The router's live view of each target as gauges, read at scrape time from this process's
 * router: breaker state (one series per state, 1 for the current one), health score, the
 * share of traffic a recovering target may take, calls in flight; and whether read-only mode is on.
 */
export interface RouterMetricsSource extends Pick<RouterAdmin, 'snapshot' | 'readOnly'> {
  networkStatus(): NetworkStatus;
  coalescingStats(): { leaders: number; followers: number };
}

export function registerTargetMetrics(registry: MetricsRegistry, router: RouterMetricsSource): void {
  registry.collected(
    'switchyard_breaker_state',
    'Circuit breaker state per target: 1 for the current state, 0 for the others.',
    'gauge',
    () => router.snapshot().flatMap((t) => BREAKER_STATES.map((state) => [{ target: t.name, target_type: t.type, state }, t.breaker === state ? 1 : 0] as const)),
    ['target', 'target_type', 'state'],
  );
  const perTarget = (name: string, help: string, value: (t: ReturnType<RouterAdmin['snapshot']>[number]) => number) =>
    registry.collected(name, help, 'gauge', () => router.snapshot().map((t) => [{ target: t.name, target_type: t.type }, value(t)] as const), ['target', 'target_type']);
  perTarget('switchyard_target_health_score', 'Health score of each target, 0..100.', (t) => t.score);
  perTarget('switchyard_target_share', 'Share of its traffic each target may take now (recovery steps 0.1 → 1).', (t) => t.share);
  perTarget('switchyard_target_in_flight', 'Upstream calls in flight per target, in this process.', (t) => t.inFlight);
  registry.collected('switchyard_router_read_only', "1 while the operator's read-only mode is on (no model calls, cached answers only).", 'gauge', () => [[{}, router.readOnly ? 1 : 0] as const], []);
  registry.collected(
    'switchyard_router_local_network_fault',
    '1 while this process cannot reach its targets nor the known-good endpoint (the fault is ours, not the targets\'), else 0.',
    'gauge',
    () => [[{}, router.networkStatus().state === 'local_fault' ? 1 : 0]],
  );
  registry.collected(
    'switchyard_router_local_network_fault_alerts_total',
    'Times this process found its own network down ("is it me or them"); one per outage.',
    'counter',
    () => [[{}, router.networkStatus().alerts]],
  );
  registry.collected(
    'switchyard_router_coalesced_calls_total',
    'Coalescable model calls by role: leader (made the upstream call) or follower (shared one in flight). Hit rate = follower / (leader + follower).',
    'counter',
    () => {
      const stats = router.coalescingStats();
      return [
        [{ role: 'leader' }, stats.leaders],
        [{ role: 'follower' }, stats.followers],
      ];
    },
    ['role'],
  );
}
