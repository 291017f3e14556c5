import { hostname } from 'node:os';
import { Inject, Injectable, Optional, type OnApplicationBootstrap, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { describeProxy, secretsFromEnv, upstreamProxyFrom, type AppConfig } from '@switchyard/config';
import type { Logger } from '@switchyard/observability';
import { TenantBudgetRepository, type DatabaseHandle } from '@switchyard/state';
import { APP_CONFIG, CALL_OBSERVERS, DATABASE, LOGGER, REDIS } from './tokens';
import { DAILY_BUDGET_SPENT, TenantBudgetGuard } from './tenant-budget-guard';
import { TenantsConfigStore } from './tenants-config';
import {
  CanaryProber,
  RedisFleetLimiter,
  RedisRetryBudgetStore,
  Router,
  RouterBreakerSync,
  RouterConfigWatcher,
  RouterOverridesSync,
  RouterSnapshotPublisher,
  SNAPSHOT_TTL_MS,
  TargetProber,
  WeightRebalancer,
  buildFleetView,
  createUpstreamFetchByTarget,
  loadRouterConfig,
  readFleetReports,
  type CallContext,
  type CallObserver,
  type FleetTargetView,
  type OverrideAction,
  type ProcessIdentity,
  type ProcessRole,
} from '@switchyard/router';
import { connectionNameOf, duplicateConnection, type RedisConnection } from './redis';
import { spreadFeaturePrefix, taggedFeaturePrefix } from './redis-keys';
import { routerBreakersKeyPrefix, routerFleetKeyPrefix, routerOverridesKeyPrefix, snapshotsIndexKey } from './router-keys';

export * from './router-keys';

/** Optional `RouterRuntimeOptions` for RouterRuntime (tests shorten the intervals). */
export const ROUTER_RUNTIME_OPTIONS = Symbol('ROUTER_RUNTIME_OPTIONS');

export interface RouterRuntimeOptions {
  /** Default: role from the logger's `service`, id from its `worker_id` or host:pid. */
  identity?: ProcessIdentity;
  /** Re-read the override hash this often. Default 10 s. */
  overridesResyncMs?: number;
  /** Publish this process's router snapshot this often. Default 3 s. */
  snapshotIntervalMs?: number;
  /** The snapshot's TTL. Default 15 s. */
  snapshotTtlMs?: number;
  /** Start active probes and the config watcher (default true; off in tests of the sync alone). */
  probesAndWatcher?: boolean;
}

/** Which process this is, from the logger's bindings (`service`, `worker_id`). */
export function processIdentityFrom(logger: Logger, config: Pick<AppConfig, 'WORKER_ID'>): ProcessIdentity {
  const bindings = typeof logger.bindings === 'function' ? logger.bindings() : {};
  const role: ProcessRole = bindings.service === 'worker' ? 'worker' : 'supervisor';
  const workerId = typeof bindings.worker_id === 'string' ? bindings.worker_id : config.WORKER_ID;
  const processId = role === 'worker' && workerId ? `worker:${workerId}` : `${role}:${hostname()}:${process.pid}`;
  return { processId, role };
}

/**
 * The shared router, built from ROUTER_CONFIG; an invalid file stops the process at boot.
 * A job's retry budget is counted in Redis under the queue prefix, so every worker of the
 * job draws on the same budget.
 */
export const routerProvider: Provider = {
  provide: Router,
  inject: [
    APP_CONFIG,
    LOGGER,
    REDIS,
    { token: CALL_OBSERVERS, optional: true },
    { token: TenantsConfigStore, optional: true },
    { token: DATABASE, optional: true },
  ],
  useFactory: (config: AppConfig, logger: Logger, redis: RedisConnection, observers: CallObserver[] = [], tenants?: TenantsConfigStore, database?: DatabaseHandle) => {
    const routerConfig = loadRouterConfig(config.ROUTER_CONFIG);
    const log = logger.child({ component: 'router' });
    for (const warning of routerConfig.warnings) log.warn({ source: routerConfig.source }, `router config: ${warning}`);
    log.info({ source: routerConfig.source, targets: routerConfig.targets.map((t) => t.name), routes: routerConfig.rules.length }, 'router config loaded');
    const proxy = upstreamProxyFrom(config);
    if (proxy) {
      log.info(
        {
          http_proxy: proxy.httpProxy && describeProxy(proxy.httpProxy),
          https_proxy: proxy.httpsProxy && describeProxy(proxy.httpsProxy),
          no_proxy: proxy.noProxy ?? null,
        },
        'calls to cloud targets go through an egress proxy (local targets are always reached directly)',
      );
    }
    // The limiter reads its settings from the router's live config (hot reload included).
    const live: { router?: Router } = {};
    const limiter = new RedisFleetLimiter({
      redis,
      // One tag for the feature: every limiter script's keys in one Cluster slot.
      keyPrefix: taggedFeaturePrefix(config.QUEUE_PREFIX, 'router-limits'),
      processId: processIdentityFrom(logger, config).processId,
      settings: () => {
        const limits = (live.router?.config ?? routerConfig).config.fleet_limits;
        return { slotTtlMs: limits.slot_ttl_ms, redisTimeoutMs: limits.redis_timeout_ms, slotLingerMs: limits.slot_linger_ms };
      },
      // The processes whose router snapshot is fresh (see RouterSnapshotPublisher).
      liveProcesses: () => redis.zcount(snapshotsIndexKey(config.QUEUE_PREFIX), Date.now() - SNAPSHOT_TTL_MS, '+inf'),
      logger: log,
    });
    const router = new Router({
      config: routerConfig,
      secrets: secretsFromEnv(),
      logger: log,
      upstream: proxy ? { proxy } : {},
      observers,
      retryBudget: new RedisRetryBudgetStore(redis, spreadFeaturePrefix(config.QUEUE_PREFIX, 'router')),
      limiter,
      ...(tenants && database ? { contextFilters: budgetFilters(tenants, database, log) } : {}),
    });
    live.router = router;
    return router;
  },
};

/** A tenant over its daily budget gets cloud targets excluded from its calls (SPEC §6). */
function budgetFilters(tenants: TenantsConfigStore, database: DatabaseHandle, logger: Logger) {
  const budgets = new TenantBudgetRepository(database.db);
  const guard = new TenantBudgetGuard({
    limitsOf: (tenantId) => tenants.limitsOf(tenantId),
    spentTodayUsd: (tenantId) => budgets.spentTodayUsd(tenantId),
    markDegraded: async (tenantId, jobId, detail) => {
      await budgets.markDegraded(tenantId, jobId, DAILY_BUDGET_SPENT, detail);
      logger.warn({ tenant_id: tenantId, job_id: jobId, ...detail }, 'tenant daily budget spent: the job runs on local targets only');
    },
    logger,
  });
  return (context: CallContext) => guard.filtersFor(context);
}

/**
 * The router's background work: active probes and business canaries of every target, the
 * dynamic-weights rounds, the config file watcher
 * (hot reload), the fleet-wide operator overrides (Redis hash + channel, applied to this
 * process's router) and this process's snapshot for the fleet view. Started once the app
 * is up, stopped on shutdown.
 */
@Injectable()
export class RouterRuntime implements OnApplicationBootstrap, OnApplicationShutdown {
  private prober: TargetProber | undefined;
  private canaries: CanaryProber | undefined;
  private rebalancer: WeightRebalancer | undefined;
  private probeTransport: ReturnType<typeof createUpstreamFetchByTarget> | undefined;
  private watcher: RouterConfigWatcher | undefined;
  private readonly sync: RouterOverridesSync;
  private readonly publisher: RouterSnapshotPublisher;
  private readonly breakers: RouterBreakerSync;
  readonly identity: ProcessIdentity;

  constructor(
    private readonly router: Router,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(REDIS) private readonly redis: RedisConnection,
    @Optional() @Inject(ROUTER_RUNTIME_OPTIONS) private readonly options: RouterRuntimeOptions = {},
  ) {
    const log = logger.child({ component: 'router' });
    this.identity = options.identity ?? processIdentityFrom(logger, config);
    const subscriberOf = (feature: string) => () => duplicateConnection(redis, `${connectionNameOf(redis) ?? 'switchyard'}-${feature}`);
    this.sync = new RouterOverridesSync({
      router,
      redis,
      openSubscriber: subscriberOf('router-overrides'),
      keyPrefix: routerOverridesKeyPrefix(config.QUEUE_PREFIX),
      logger: log,
      processId: this.identity.processId,
      resyncMs: options.overridesResyncMs,
    });
    this.breakers = new RouterBreakerSync({
      router,
      redis,
      openSubscriber: subscriberOf('router-breakers'),
      keyPrefix: routerBreakersKeyPrefix(config.QUEUE_PREFIX),
      processId: this.identity.processId,
      logger: log,
    });
    this.publisher = new RouterSnapshotPublisher({
      ...this.identity,
      router,
      redis,
      keyPrefix: routerFleetKeyPrefix(config.QUEUE_PREFIX),
      logger: log,
      intervalMs: options.snapshotIntervalMs,
      ttlMs: options.snapshotTtlMs,
    });
  }

  /** The override sync (tests reach its subscriber connection). */
  get overrides(): RouterOverridesSync {
    return this.sync;
  }

  async onApplicationBootstrap(): Promise<void> {
    const log = this.logger.child({ component: 'router' });
    if (this.options.probesAndWatcher !== false) {
      const probes = this.router.config.config.probes;
      if (probes.enabled) {
        // Probes take the same way out as the calls they stand for (egress proxy included).
        const proxy = upstreamProxyFrom(this.config);
        const transport = createUpstreamFetchByTarget(proxy ? { proxy } : {});
        this.probeTransport = transport;
        this.prober = new TargetProber(this.router, {
          fetchFor: (target) => transport.fetchFor(target),
          livenessIntervalMs: probes.liveness_interval_ms,
          inferenceIntervalMs: probes.inference_interval_ms,
          timeoutMs: probes.timeout_ms,
          secrets: secretsFromEnv(),
          logger: log,
        });
        this.prober.start();
        this.canaries = new CanaryProber(this.router, { fetchFor: (target) => transport.fetchFor(target), secrets: secretsFromEnv(), logger: log });
        this.canaries.start();
      }
      this.rebalancer = new WeightRebalancer(this.router, log);
      this.rebalancer.start();
      this.watcher = new RouterConfigWatcher({
        filePath: this.config.ROUTER_CONFIG,
        // A reload may bring back a drained target the hash names: re-apply the overrides at once.
        apply: (next) => {
          this.router.reload(next);
          void this.sync.resync('config reload').catch(() => undefined);
        },
        logger: log,
      });
      this.watcher.start();
    }
    await this.sync.start();
    await this.breakers.start();
    this.publisher.start();
    log.info({ process_id: this.identity.processId, role: this.identity.role }, 'router fleet sync started');
  }

  /** An operator's drain / enable / force-primary: shared with every process through Redis, and applied here. */
  applyOverride(change: OverrideAction): Promise<void> {
    return this.sync.apply(change);
  }

  /** Every process's live view of every target (this process's own view is live, age 0). */
  async fleet(now: number = Date.now()): Promise<Map<string, FleetTargetView>> {
    const reports = await readFleetReports(this.redis, routerFleetKeyPrefix(this.config.QUEUE_PREFIX), now, this.publisher.ttlMs);
    return buildFleetView(reports, now, { ...this.identity, reportedAt: now, targets: this.router.snapshot() });
  }

  async onApplicationShutdown(): Promise<void> {
    this.prober?.stop();
    this.canaries?.stop();
    this.rebalancer?.stop();
    this.watcher?.stop();
    await Promise.allSettled([this.sync.stop(), this.breakers.stop(), this.publisher.stop(), this.router.close(), this.probeTransport?.close()]);
  }
}
