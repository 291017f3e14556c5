import type { Logger } from '@switchyard/observability';
import type { Router } from '../router';
import type { FleetRedisClient, FleetRedisSubscriber } from './fleet-redis';

/** One key per target (single-key commands only: the apps give the feature an untagged prefix, so the keys spread over a Cluster). */
export const fleetBreakerOpenKey = (keyPrefix: string, target: string): string => `${keyPrefix}open:${target}`;
export const fleetBreakerChannel = (keyPrefix: string): string => `${keyPrefix}changed`;

export type BreakerOpenMessage =
  | {
      kind?: 'open';
      target: string;
      /** The rest of the cooldown as the opener measured it. */
      cooldownLeftMs: number;
      from: string;
    }
  | { kind: 'closed'; target: string; from: string };

export interface RouterBreakerSyncOptions {
  router: Pick<Router, 'onBreakerOpen' | 'onBreakerClose' | 'applyFleetBreakerOpen' | 'applyFleetBreakerClose' | 'config'>;
  redis: FleetRedisClient;
  /** Opens the connection the breaker messages arrive on (a duplicate of `redis`, in subscriber mode). */
  openSubscriber: () => FleetRedisSubscriber;
  /** The feature's key prefix, untagged (e.g. `switchyard:router-breakers:`). */
  keyPrefix: string;
  processId: string;
  logger: Logger;
}

/**
 * Shared breakers: a breaker that opens in one process is published (a key that lives as long
 * as its cooldown, and a message on a channel) and opened in every other process at once; a
 * process that (re)connects reads the keys, so it misses none. The opener alone probes the
 * target after the cooldown: its half-open probes closing the breaker close it everywhere (a
 * failed probe opens it again, and that is published like the first opening).
 */
export class RouterBreakerSync {
  private subscriber: FleetRedisSubscriber | undefined;
  private unsubscribe: (() => void)[] = [];

  constructor(private readonly options: RouterBreakerSyncOptions) {}

  async start(): Promise<void> {
    const { router, logger, keyPrefix, processId } = this.options;
    this.unsubscribe = [
      router.onBreakerOpen((target, cooldownLeftMs) => void this.publish(target, cooldownLeftMs)),
      router.onBreakerClose((target) => void this.publishClosed(target)),
    ];
    const subscriber = this.options.openSubscriber();
    this.subscriber = subscriber;
    subscriber.on('error', (error: Error) => logger.warn({ err: error.message }, 'router breaker subscriber: redis error'));
    subscriber.on('message', (_channel: string, raw: string) => {
      try {
        const message = JSON.parse(raw) as BreakerOpenMessage;
        if (message.from === processId) return;
        if (message.kind === 'closed') router.applyFleetBreakerClose(message.target);
        else router.applyFleetBreakerOpen(message.target, message.cooldownLeftMs);
      } catch {
        logger.warn('router breaker subscriber: a malformed message was ignored');
      }
    });
    let first = true;
    subscriber.on('ready', () => {
      if (first) return;
      void subscriber
        .subscribe(fleetBreakerChannel(keyPrefix))
        .then(() => this.readOpenBreakers())
        .catch((error: unknown) => logger.warn({ err: String(error) }, 'router breaker resubscribe failed'));
    });
    await subscriber.subscribe(fleetBreakerChannel(keyPrefix));
    first = false;
    await this.readOpenBreakers();
  }

  async stop(): Promise<void> {
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber === undefined) return;
    try {
      await subscriber.quit();
    } catch {
      subscriber.disconnect();
    }
  }

  /** The breakers open somewhere in the fleet now, applied here. */
  async readOpenBreakers(): Promise<void> {
    const { redis, router, keyPrefix } = this.options;
    const targets = router.config.targets.map((target) => target.name);
    const left = await Promise.all(targets.map((target) => redis.pttl(fleetBreakerOpenKey(keyPrefix, target))));
    targets.forEach((target, index) => {
      const ms = left[index] ?? -2;
      if (ms > 0) router.applyFleetBreakerOpen(target, ms);
    });
  }

  private async publishClosed(target: string): Promise<void> {
    const { redis, keyPrefix, processId, logger } = this.options;
    const message: BreakerOpenMessage = { kind: 'closed', target, from: processId };
    try {
      await redis.del(fleetBreakerOpenKey(keyPrefix, target));
      await redis.publish(fleetBreakerChannel(keyPrefix), JSON.stringify(message));
    } catch (error) {
      logger.warn({ err: String(error), target }, 'could not tell the fleet that a breaker closed; the others half-open on their own later');
    }
  }

  private async publish(target: string, cooldownLeftMs: number): Promise<void> {
    const { redis, keyPrefix, processId, logger } = this.options;
    if (cooldownLeftMs <= 0) return;
    const message: BreakerOpenMessage = { target, cooldownLeftMs, from: processId };
    try {
      await redis.set(fleetBreakerOpenKey(keyPrefix, target), processId, 'PX', Math.ceil(cooldownLeftMs));
      await redis.publish(fleetBreakerChannel(keyPrefix), JSON.stringify(message));
    } catch (error) {
      logger.warn({ err: String(error), target }, 'could not tell the fleet that a breaker opened; other processes find out by their own failures');
    }
  }
}
