import type { Logger } from '@switchyard/observability';
import type { Router } from '../router';
import type { FleetRedisClient, FleetRedisSubscriber } from './fleet-redis';

/**
 * Operator overrides (drain / enable / force-primary, seed 004 §4.3) are fleet-wide state:
 * one Redis hash under the queue prefix, announced on a pub/sub channel. Every process
 * applies the hash to its own Router; the hash is the truth, a message only says "look now".
 *
 * Hash `<keyPrefix>overrides` (the apps give the feature its own hash tag, e.g. `{switchyard:router-overrides}:`):
 *   `drained:<target>` → ISO time of the drain (present = drained)
 *   `force_primary`    → target name (absent = normal routing)
 *   `read_only`        → ISO time it was switched on (present = read-only mode)
 */
export const DRAINED_FIELD_PREFIX = 'drained:';
export const FORCE_PRIMARY_FIELD = 'force_primary';
export const READ_ONLY_FIELD = 'read_only';

export const fleetOverridesKey = (keyPrefix: string): string => `${keyPrefix}overrides`;
export const fleetOverridesChannel = (keyPrefix: string): string => `${keyPrefix}changed`;

/** What the operators asked for, fleet-wide. */
export interface RouterOverrides {
  drained: string[];
  forcedPrimary: string | null;
  readOnly: boolean;
}

export type OverrideAction =
  | { action: 'drain' | 'enable'; target: string }
  | { action: 'force_primary'; target: string | null }
  | { action: 'read_only'; enabled: boolean };

/** The hash's fields → overrides. Unknown fields are ignored (a newer writer may add some). */
export function overridesFromHash(hash: Record<string, string>): RouterOverrides {
  const drained: string[] = [];
  let forcedPrimary: string | null = null;
  let readOnly = false;
  for (const [field, value] of Object.entries(hash)) {
    if (field.startsWith(DRAINED_FIELD_PREFIX)) {
      const target = field.slice(DRAINED_FIELD_PREFIX.length);
      if (target.length > 0) drained.push(target);
    } else if (field === FORCE_PRIMARY_FIELD && value.length > 0) {
      forcedPrimary = value;
    } else if (field === READ_ONLY_FIELD) {
      readOnly = true;
    }
  }
  return { drained: drained.sort(), forcedPrimary, readOnly };
}

/** Overrides → the hash's fields (the inverse of `overridesFromHash`). */
export function overridesToHash(overrides: RouterOverrides, drainedAt: string = new Date(0).toISOString()): Record<string, string> {
  const hash: Record<string, string> = {};
  for (const target of overrides.drained) hash[`${DRAINED_FIELD_PREFIX}${target}`] = drainedAt;
  if (overrides.forcedPrimary !== null) hash[FORCE_PRIMARY_FIELD] = overrides.forcedPrimary;
  if (overrides.readOnly) hash[READ_ONLY_FIELD] = drainedAt;
  return hash;
}

/** The router's current overrides, read from its snapshot. */
export function localOverrides(router: Pick<Router, 'snapshot' | 'readOnly'>): RouterOverrides {
  const snapshot = router.snapshot();
  return {
    drained: snapshot.filter((t) => t.drained).map((t) => t.name).sort(),
    forcedPrimary: snapshot.find((t) => t.forcedPrimary)?.name ?? null,
    readOnly: router.readOnly,
  };
}

export interface OverridePlan {
  drain: string[];
  enable: string[];
  /** `undefined`: leave the forced primary as it is. */
  forcePrimary?: string | null;
  /** `undefined`: leave read-only mode as it is. */
  readOnly?: boolean;
  /** Targets named in the hash that this process's config does not have (ignored). */
  unknown: string[];
}

/**
 * The calls that bring a router from `local` to `desired`. Only differences produce calls
 * (`Router.enable` also resets the breaker, so an already-enabled target is left alone).
 * Names the config does not know are reported, not applied.
 */
export function planOverrides(desired: RouterOverrides, local: RouterOverrides, known: ReadonlySet<string>): OverridePlan {
  const unknown = new Set<string>();
  const want = new Set<string>();
  for (const target of desired.drained) {
    if (known.has(target)) want.add(target);
    else unknown.add(target);
  }
  const have = new Set(local.drained);
  const plan: OverridePlan = {
    drain: [...want].filter((t) => !have.has(t)).sort(),
    enable: [...have].filter((t) => !want.has(t)).sort(),
    unknown: [],
  };
  let forced = desired.forcedPrimary;
  if (forced !== null && !known.has(forced)) {
    unknown.add(forced);
    forced = null;
  }
  if (forced !== local.forcedPrimary) plan.forcePrimary = forced;
  if (desired.readOnly !== local.readOnly) plan.readOnly = desired.readOnly;
  plan.unknown = [...unknown].sort();
  return plan;
}

/** The hash write + announcement for one operator action (one MULTI, so the two never part). */
export async function writeOverride(redis: FleetRedisClient, keyPrefix: string, change: OverrideAction, origin: string, at: Date = new Date()): Promise<void> {
  const key = fleetOverridesKey(keyPrefix);
  const multi = redis.multi();
  if (change.action === 'drain') multi.hset(key, `${DRAINED_FIELD_PREFIX}${change.target}`, at.toISOString());
  else if (change.action === 'enable') multi.hdel(key, `${DRAINED_FIELD_PREFIX}${change.target}`);
  else if (change.action === 'read_only') {
    if (change.enabled) multi.hset(key, READ_ONLY_FIELD, at.toISOString());
    else multi.hdel(key, READ_ONLY_FIELD);
  } else if (change.target === null) multi.hdel(key, FORCE_PRIMARY_FIELD);
  else multi.hset(key, FORCE_PRIMARY_FIELD, change.target);
  multi.publish(fleetOverridesChannel(keyPrefix), JSON.stringify({ ...change, origin, at: at.toISOString() }));
  const results = await multi.exec();
  const failed = results?.find(([error]) => error !== null);
  if (results === null || failed !== undefined) throw failed?.[0] ?? new Error('router override write was aborted');
}

export interface RouterOverridesSyncOptions {
  router: Router;
  /** The process's command connection. */
  redis: FleetRedisClient;
  /** Opens the connection the announcements arrive on (a duplicate of `redis`, in subscriber mode). */
  openSubscriber: () => FleetRedisSubscriber;
  /** The feature's key prefix, one hash tag (e.g. `{switchyard:router-overrides}:`). */
  keyPrefix: string;
  logger: Logger;
  /** This process's id, in the announcements it sends. */
  processId: string;
  /** Re-read the hash this often, whatever the channel said (a safety net). Default 10 s. */
  resyncMs?: number;
  /** How long `start()` waits for the first load before going on without it. Default 3 s. */
  initialLoadTimeoutMs?: number;
}

/**
 * Keeps one process's Router in line with the fleet-wide override hash: loads it at start,
 * applies what the channel announces, reloads after every (re)subscribe — a message missed
 * while disconnected must not leave the process stale — and every `resyncMs` as well.
 */
export class RouterOverridesSync {
  private subscriber: FleetRedisSubscriber | undefined;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;
  private warnedUnknown = '';
  /** How many times the hash was applied (for tests and logs). */
  syncs = 0;

  constructor(private readonly options: RouterOverridesSyncOptions) {}

  get key(): string {
    return fleetOverridesKey(this.options.keyPrefix);
  }

  get channel(): string {
    return fleetOverridesChannel(this.options.keyPrefix);
  }

  /** The subscriber connection (tests disconnect it to simulate a network cut). */
  get subscriberConnection(): FleetRedisSubscriber | undefined {
    return this.subscriber;
  }

  async start(): Promise<void> {
    const { logger } = this.options;
    const subscriber = this.options.openSubscriber();
    this.subscriber = subscriber;
    subscriber.on('error', (error: Error) => logger.warn({ err: error.message }, 'router overrides subscriber: redis error'));
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      this.onAnnouncement(message);
    });
    // Every ready after the first is a reconnect: (re)subscribe, then reload what may have been missed.
    let first = true;
    subscriber.on('ready', () => {
      if (first) {
        first = false;
        return;
      }
      logger.info('router overrides subscriber reconnected; reloading the override hash');
      void subscriber
        .subscribe(this.channel)
        .then(() => this.resync('reconnect'))
        .catch((error: unknown) => logger.warn({ err: String(error) }, 'router overrides resubscribe failed'));
    });
    const initial = (async () => {
      await subscriber.subscribe(this.channel);
      await this.resync('start');
    })();
    initial.catch((error: unknown) => logger.warn({ err: String(error) }, 'router overrides: initial load failed; retrying on the resync timer'));
    const resyncMs = this.options.resyncMs ?? 10_000;
    this.timer = setInterval(() => void this.resync('timer').catch(() => undefined), resyncMs);
    this.timer.unref();
    await Promise.race([initial.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, this.options.initialLoadTimeoutMs ?? 3_000).unref())]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber) {
      try {
        await subscriber.quit();
      } catch {
        subscriber.disconnect();
      }
    }
  }

  /** Operator action: write the hash, announce it, and apply it here at once. */
  async apply(change: OverrideAction): Promise<void> {
    await writeOverride(this.options.redis, this.options.keyPrefix, change, this.options.processId);
    this.applyLocally(change);
  }

  /** Reads the hash and applies the difference to the router. Runs one at a time, in order. */
  resync(reason: string): Promise<void> {
    const run = this.chain.then(async () => {
      if (this.stopped) return;
      const hash = await this.options.redis.hgetall(this.key);
      this.applyDesired(overridesFromHash(hash), reason);
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  private onAnnouncement(message: string): void {
    let change: (OverrideAction & { origin?: string }) | undefined;
    try {
      change = JSON.parse(message) as OverrideAction & { origin?: string };
    } catch {
      change = undefined;
    }
    void this.resync('announcement')
      .then(() => {
        // An explicit enable also resets the breaker everywhere, as it does where the operator clicked.
        if (change?.action === 'enable' && change.origin !== this.options.processId && this.options.router.config.targetsByName.has(change.target)) {
          if (!localOverrides(this.options.router).drained.includes(change.target)) this.options.router.enable(change.target);
        }
      })
      .catch((error: unknown) => this.options.logger.warn({ err: String(error) }, 'router overrides: reload after an announcement failed'));
  }

  private applyLocally(change: OverrideAction): void {
    const { router } = this.options;
    if (change.action === 'drain') router.drain(change.target);
    else if (change.action === 'enable') router.enable(change.target);
    else if (change.action === 'read_only') router.setReadOnly(change.enabled);
    else router.forcePrimary(change.target);
  }

  private applyDesired(desired: RouterOverrides, reason: string): void {
    const { router, logger } = this.options;
    const plan = planOverrides(desired, localOverrides(router), new Set(router.config.targetsByName.keys()));
    for (const target of plan.drain) router.drain(target);
    for (const target of plan.enable) router.enable(target);
    // The router never lets a forced cloud primary take sensitive work; forcing only reorders preference.
    if (plan.forcePrimary !== undefined) router.forcePrimary(plan.forcePrimary);
    if (plan.readOnly !== undefined) router.setReadOnly(plan.readOnly);
    const unknownKey = plan.unknown.join(',');
    if (unknownKey !== this.warnedUnknown) {
      this.warnedUnknown = unknownKey;
      if (plan.unknown.length > 0) logger.warn({ targets: plan.unknown, key: this.key }, 'router overrides name targets this config does not have; ignored');
    }
    if (plan.drain.length > 0 || plan.enable.length > 0 || plan.forcePrimary !== undefined || plan.readOnly !== undefined) {
      logger.info({ reason, drained: plan.drain, enabled: plan.enable, forcedPrimary: plan.forcePrimary, readOnly: plan.readOnly }, 'router overrides applied from the fleet');
    }
    this.syncs += 1;
  }
}
