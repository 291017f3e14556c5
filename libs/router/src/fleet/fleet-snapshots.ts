import type { Logger } from '@switchyard/observability';
import type { TargetSnapshot } from '../admin/router-admin';
import { redactUrl } from '../config/redact-url';
import type { Router } from '../router';
import type { TargetHealthReport } from './fleet-health';
import type { FleetRedisClient } from './fleet-redis';

/**
 * The fleet view of the router: every process (supervisor, workers) keeps its own health,
 * breakers and in-flight counts, and publishes its `router.snapshot()` every few seconds
 * under `<keyPrefix>snapshots:<processId>` (JSON, short TTL). An index sorted set
 * `<keyPrefix>snapshots` (score = report time) lets a reader find them without SCAN. The
 * apps choose `keyPrefix` (one hash tag for the feature, e.g. `{switchyard:router-fleet}:`).
 */
export type ProcessRole = 'supervisor' | 'worker';

export interface ProcessIdentity {
  processId: string;
  role: ProcessRole;
}

export interface RouterSnapshotReport extends ProcessIdentity {
  /** Epoch ms of the report, by the reporter's clock. */
  reportedAt: number;
  targets: TargetSnapshot[];
  /** The score and passive-window aggregates the other processes merge into their routing (absent from older reporters). */
  health?: TargetHealthReport[];
}

/** How long a process's snapshot lives without a new one (it is then taken for gone). */
export const SNAPSHOT_TTL_MS = 15_000;

/** The index and the reports share the prefix's hash tag: one MULTI writes both, one MGET reads the reports. */
export const fleetSnapshotsIndexKey = (keyPrefix: string): string => `${keyPrefix}snapshots`;
export const fleetSnapshotKey = (keyPrefix: string, processId: string): string => `${keyPrefix}snapshots:${processId}`;

export interface RouterSnapshotPublisherOptions extends ProcessIdentity {
  router: Pick<Router, 'snapshot' | 'healthReport' | 'applyFleetHealth'>;
  redis: FleetRedisClient;
  /** The feature's key prefix, one hash tag (e.g. `{switchyard:router-fleet}:`). */
  keyPrefix: string;
  logger: Logger;
  /** Default 3 s. */
  intervalMs?: number;
  /** Default 15 s. */
  ttlMs?: number;
  now?: () => number;
}

/**
 * Publishes this process's router snapshot every `intervalMs`, with a TTL, and removes it on
 * stop. Each round also reads the other processes' reports and hands their health to this
 * process's router, so routing scores every target on the fleet's view (`mergeTargetHealth`).
 */
export class RouterSnapshotPublisher {
  private timer: NodeJS.Timeout | undefined;
  private failing = false;

  constructor(private readonly options: RouterSnapshotPublisherOptions) {}

  get ttlMs(): number {
    return this.options.ttlMs ?? SNAPSHOT_TTL_MS;
  }

  start(): void {
    void this.publish();
    this.timer = setInterval(() => void this.publish(), this.options.intervalMs ?? 3_000);
    this.timer.unref();
  }

  async publish(): Promise<void> {
    const { redis, keyPrefix, processId, role, router, logger } = this.options;
    const now = (this.options.now ?? Date.now)();
    // Whatever the snapshot holds, no endpoint credential leaves the process.
    const targets = router.snapshot().map((target) => ({ ...target, endpoint: redactUrl(target.endpoint) }));
    const report: RouterSnapshotReport = { processId, role, reportedAt: now, targets, health: router.healthReport() };
    try {
      await redis
        .multi()
        .set(fleetSnapshotKey(keyPrefix, processId), JSON.stringify(report), 'PX', this.ttlMs)
        .zadd(fleetSnapshotsIndexKey(keyPrefix), now, processId)
        .zremrangebyscore(fleetSnapshotsIndexKey(keyPrefix), '-inf', String(now - this.ttlMs))
        .exec();
      const peers = (await readFleetReports(redis, keyPrefix, now, this.ttlMs)).filter((peer) => peer.processId !== processId);
      router.applyFleetHealth(
        peers.map((peer) => ({ processId: peer.processId, reportedAt: peer.reportedAt, targets: peer.health ?? [] })),
        this.ttlMs,
      );
      if (this.failing) logger.info('router snapshot publishing recovered');
      this.failing = false;
    } catch (error) {
      if (!this.failing) logger.warn({ err: String(error) }, 'router snapshot publish failed; the fleet view misses this process, and routing here drops the others\' health as it goes stale, until Redis answers');
      this.failing = true;
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const { redis, keyPrefix, processId } = this.options;
    if (redis.status !== 'ready') return;
    try {
      await redis.multi().del(fleetSnapshotKey(keyPrefix, processId)).zrem(fleetSnapshotsIndexKey(keyPrefix), processId).exec();
    } catch {
      // The TTL removes it anyway.
    }
  }
}

/** Every live report under the prefix (expired ones are skipped and pruned from the index). */
export async function readFleetReports(redis: FleetRedisClient, keyPrefix: string, now: number = Date.now(), ttlMs = SNAPSHOT_TTL_MS): Promise<RouterSnapshotReport[]> {
  const index = fleetSnapshotsIndexKey(keyPrefix);
  await redis.zremrangebyscore(index, '-inf', String(now - ttlMs));
  const ids = await redis.zrange(index, '0', '-1');
  if (ids.length === 0) return [];
  const values = await redis.mget(ids.map((id) => fleetSnapshotKey(keyPrefix, id)));
  const reports: RouterSnapshotReport[] = [];
  for (const value of values) {
    if (value === null) continue;
    try {
      reports.push(JSON.parse(value) as RouterSnapshotReport);
    } catch {
      // A malformed report is skipped; its TTL ends it.
    }
  }
  return reports.sort((a, b) => a.processId.localeCompare(b.processId));
}

/** One process's view of one target. */
export interface FleetTargetEntry extends ProcessIdentity {
  ageMs: number;
  state: TargetSnapshot['state'];
  breaker: TargetSnapshot['breaker'];
  score: number;
  share: number;
  inFlight: number;
  latencyMs: TargetSnapshot['latencyMs'];
  errorRate: number;
  requests: number;
  drained: boolean;
  forcedPrimary: boolean;
  /** The process's weights of each split the target is in (dynamic weights differ per process). */
  weights: TargetSnapshot['weights'];
  canary: TargetSnapshot['canary'];
}

export interface FleetAggregate {
  processes: number;
  minScore: number | null;
  anyBreakerOpen: boolean;
  totalInFlight: number;
  worstErrorRate: number;
  /** Processes whose router has the target drained (should be all or none). */
  drainedIn: number;
  /** Processes whose canaries find the target failing. */
  canaryFailingIn: number;
}

export interface FleetTargetView {
  processes: FleetTargetEntry[];
  aggregate: FleetAggregate;
}

/** The aggregate of one target over the processes that report it. */
export function aggregateTarget(entries: readonly FleetTargetEntry[]): FleetAggregate {
  return {
    processes: entries.length,
    minScore: entries.length === 0 ? null : Math.min(...entries.map((e) => e.score)),
    anyBreakerOpen: entries.some((e) => e.breaker === 'open'),
    totalInFlight: entries.reduce((sum, e) => sum + e.inFlight, 0),
    worstErrorRate: entries.reduce((worst, e) => Math.max(worst, e.errorRate), 0),
    drainedIn: entries.filter((e) => e.drained).length,
    canaryFailingIn: entries.filter((e) => e.canary?.failing === true).length,
  };
}

/**
 * Reports → per target name: each process's view and the aggregate. `self`, when given,
 * replaces the stored report of the same process (the caller's live view, age 0).
 */
export function buildFleetView(reports: readonly RouterSnapshotReport[], now: number, self?: RouterSnapshotReport): Map<string, FleetTargetView> {
  const all = self === undefined ? [...reports] : [...reports.filter((r) => r.processId !== self.processId), self];
  const byTarget = new Map<string, FleetTargetEntry[]>();
  for (const report of all) {
    const ageMs = Math.max(0, now - report.reportedAt);
    for (const t of report.targets) {
      const entry: FleetTargetEntry = {
        processId: report.processId,
        role: report.role,
        ageMs,
        state: t.state,
        breaker: t.breaker,
        score: t.score,
        share: t.share,
        inFlight: t.inFlight,
        latencyMs: t.latencyMs,
        errorRate: t.errorRate,
        requests: t.requests,
        drained: t.drained,
        forcedPrimary: t.forcedPrimary,
        // Absent from reporters older than weighted splits and canaries.
        weights: t.weights ?? [],
        canary: t.canary ?? null,
      };
      const list = byTarget.get(t.name) ?? [];
      list.push(entry);
      byTarget.set(t.name, list);
    }
  }
  const view = new Map<string, FleetTargetView>();
  for (const [name, entries] of byTarget) {
    entries.sort((a, b) => (a.role === b.role ? a.processId.localeCompare(b.processId) : a.role === 'supervisor' ? -1 : 1));
    view.set(name, { processes: entries, aggregate: aggregateTarget(entries) });
  }
  return view;
}
