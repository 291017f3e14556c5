import { createHash } from 'node:crypto';
import type { Logger } from '@switchyard/observability';
import type { Clock } from '../clock';
import { systemClock } from '../clock';
import type { TargetConfig } from '../config/router-config.schema';
import { RateWindow, quotaHeadroom } from '../quota/rate-window';
import type { UpstreamQuotaReport } from '../quota/upstream-quota';
import { fallbackShare } from './fallback-share';
import { ACQUIRE_SCRIPT, RENEW_SCRIPT } from './limiter-scripts';
import type { HeldSlot, LimitReason, SlotResult, TargetLimiter } from './target-limiter';

/** The few Redis commands the limiter needs (an ioredis client or cluster satisfies it). */
export interface LimiterRedis {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  zrem(key: string, ...members: string[]): Promise<number>;
  set(key: string, value: string | number, px: 'PX', ms: number): Promise<unknown>;
}

/**
 * A target's keys under `prefix`, which carries the feature's hash tag (the apps use
 * `{<keyspace>:router-limits}:`), so every key a script touches is in one Cluster slot.
 */
export const limiterKeys = (prefix: string, target: string) => ({
  slots: `${prefix}${target}:slots`,
  rate: `${prefix}${target}:rate`,
  upstreamRequests: `${prefix}${target}:upstream-requests`,
  upstreamTokens: `${prefix}${target}:upstream-tokens`,
});

export interface FleetLimiterSettings {
  /** A holder that stops renewing (killed) loses its slot after this long. */
  slotTtlMs: number;
  /** How long a Redis round trip may take before the call falls back to the process's share. */
  redisTimeoutMs: number;
  /**
   * A freed slot of a target without rpm/tpm stays this process's this long, for its next call
   * to that target (no round trip); then it is handed back. 0 = hand back at once.
   */
  slotLingerMs: number;
}

export interface RedisFleetLimiterOptions {
  redis: LimiterRedis;
  /** Ends with the feature's hash tag and a colon, e.g. `{switchyard:router-limits}:`. */
  keyPrefix: string;
  /** Names this process's slots (`<processId>#<n>`), so the admin view and the logs say who holds them. */
  processId: string;
  settings: () => FleetLimiterSettings;
  /** The processes alive right now (the fleet snapshots know); read while Redis answers, used when it does not. */
  liveProcesses: () => Promise<number>;
  logger: Logger;
  /** Given in tests: the scripts then run on this time instead of Redis's. */
  clock?: Clock;
}

interface FallbackState {
  held: number;
  rate: RateWindow;
}

const LIVE_PROCESSES_REFRESH_MS = 5_000;
/** How long one Redis grant may be reused by this process's calls before it goes back to the fleet. */
const MAX_STICKY_MS = 1_000;
/** After a Redis failure, how long acquires use the fallback share before one tries Redis again. */
const REDIS_RETRY_AFTER_MS = 1_000;

/**
 * `max_concurrency`, `rpm` and `tpm` of every target for the whole fleet: one Lua round trip
 * per acquire, slots renewed while their calls run (one script call per target every third of
 * the TTL) and freed on release; a killed holder's slot lapses after the TTL. Without Redis,
 * each process keeps to its share of the limit (limit ÷ processes last seen alive), and says so.
 */
export class RedisFleetLimiter implements TargetLimiter {
  private readonly held = new Map<string, Set<string>>();
  /** Freed slots still held for this process's next call, per target. */
  private readonly lingering = new Map<string, { holder: string; grantedAt: number; timer: NodeJS.Timeout }[]>();
  private readonly fallback = new Map<string, FallbackState>();
  private readonly shas = new Map<string, string>();
  private counter = 0;
  private renewTimer: NodeJS.Timeout | undefined;
  private knownProcesses = 1;
  private processesReadAt = Number.NEGATIVE_INFINITY;
  private degraded = false;
  /** While Redis is away, calls go straight to the fallback share until then, and one call tries Redis again. */
  private skipRedisUntil = Number.NEGATIVE_INFINITY;
  private closed = false;

  constructor(private readonly options: RedisFleetLimiterOptions) {}

  async acquire(target: TargetConfig, tokens: number): Promise<SlotResult> {
    const reused = this.lingering.get(target.name)?.pop();
    if (reused !== undefined) {
      clearTimeout(reused.timer);
      return { granted: true, slot: this.slotFor(target, reused.holder, reused.grantedAt, true) };
    }
    if (Date.now() < this.skipRedisUntil) return this.acquireFallback(target, tokens, 'Redis did not answer a moment ago');
    const { slotTtlMs } = this.options.settings();
    const holder = `${this.options.processId}#${++this.counter}`;
    const keys = limiterKeys(this.options.keyPrefix, target.name);
    let reply: unknown;
    try {
      reply = await this.run(ACQUIRE_SCRIPT, [keys.slots, keys.rate, keys.upstreamRequests, keys.upstreamTokens], () => [
        this.nowArg(),
        holder,
        slotTtlMs,
        target.max_concurrency,
        target.rpm ?? 0,
        target.tpm ?? 0,
        Math.max(0, Math.round(tokens)),
      ]);
    } catch (error) {
      // Not every call of an outage pays the Redis timeout: the next second goes straight to the share.
      this.skipRedisUntil = Date.now() + REDIS_RETRY_AFTER_MS;
      return this.acquireFallback(target, tokens, error);
    }
    this.recovered();
    void this.refreshLiveProcesses();
    const [granted, reason, heldNow, retryAfterMs] = reply as [number, string, number, number];
    if (granted !== 1) return { granted: false, reason: reason as LimitReason, retryAfterMs: Number(retryAfterMs) };
    this.hold(target.name, holder);
    // Only a slot granted with room to spare may linger: when the fleet is full, others wait for it.
    return { granted: true, slot: this.slotFor(target, holder, Date.now(), Number(heldNow) < target.max_concurrency) };
  }

  /**
   * A held slot. Released, it lingers for this process's next call to the target — when the
   * fleet had room to spare at its grant, the target has no rpm/tpm (a quota counts every
   * request) and it was granted less than MAX_STICKY_MS ago — then goes back, so a slot never
   * stays with one process for long while others may be waiting.
   */
  private slotFor(target: TargetConfig, holder: string, grantedAt: number, roomToSpare: boolean): HeldSlot {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const lingerMs = this.options.settings().slotLingerMs;
        const sticky = roomToSpare && Date.now() - grantedAt < MAX_STICKY_MS && target.rpm === undefined && target.tpm === undefined;
        if (lingerMs <= 0 || this.closed || !sticky) {
          this.handBack(target.name, holder);
          return;
        }
        const list = this.lingering.get(target.name) ?? [];
        this.lingering.set(target.name, list);
        const entry = {
          holder,
          grantedAt,
          timer: setTimeout(() => {
            const at = list.indexOf(entry);
            if (at >= 0) list.splice(at, 1);
            this.handBack(target.name, holder);
          }, lingerMs),
        };
        entry.timer.unref();
        list.push(entry);
      },
    };
  }

  private handBack(target: string, holder: string): void {
    this.held.get(target)?.delete(holder);
    // A release that does not land is made good by the TTL.
    this.withDeadline(this.options.redis.zrem(limiterKeys(this.options.keyPrefix, target).slots, holder)).catch(() => undefined);
  }

  /**
   * The upstream's own rate-limit headers: what it says is left holds for the whole fleet until
   * its reset (each grant counts down from it). Best effort: a write that does not land leaves
   * each process's own view of the headers in force.
   */
  noteUpstreamQuota(target: TargetConfig, report: UpstreamQuotaReport): void {
    const keys = limiterKeys(this.options.keyPrefix, target.name);
    const writes = [
      report.requests && report.requests.resetMs > 0 ? this.options.redis.set(keys.upstreamRequests, report.requests.remaining, 'PX', report.requests.resetMs) : undefined,
      report.tokens && report.tokens.resetMs > 0 ? this.options.redis.set(keys.upstreamTokens, report.tokens.remaining, 'PX', report.tokens.resetMs) : undefined,
    ];
    for (const write of writes) if (write !== undefined) this.withDeadline(write).catch(() => undefined);
  }

  /** The share of each limit this process keeps to while Redis does not answer. */
  shareOf(target: TargetConfig): { maxConcurrency: number; rpm?: number; tpm?: number } {
    const n = this.knownProcesses;
    const rpm = fallbackShare(target.rpm, n);
    const tpm = fallbackShare(target.tpm, n);
    return { maxConcurrency: fallbackShare(target.max_concurrency, n)!, ...(rpm === undefined ? {} : { rpm }), ...(tpm === undefined ? {} : { tpm }) };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const list of this.lingering.values()) for (const entry of list.splice(0)) clearTimeout(entry.timer);
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = undefined;
    const releases = [...this.held].map(([target, holders]) =>
      holders.size === 0 ? undefined : this.withDeadline(this.options.redis.zrem(limiterKeys(this.options.keyPrefix, target).slots, ...holders)).catch(() => undefined),
    );
    this.held.clear();
    await Promise.all(releases);
  }

  private acquireFallback(target: TargetConfig, tokens: number, error: unknown): SlotResult {
    const share = this.shareOf(target);
    if (!this.degraded) {
      this.degraded = true;
      this.options.logger.warn(
        { err: String(error), live_processes: this.knownProcesses },
        'fleet limiter: Redis does not answer; each target is held to this process’s share of its limits (limit ÷ live processes) until it does',
      );
    }
    const now = (this.options.clock ?? systemClock).now();
    const state = this.fallback.get(target.name) ?? { held: 0, rate: new RateWindow() };
    this.fallback.set(target.name, state);
    if (state.held >= share.maxConcurrency) return { granted: false, reason: 'concurrency', retryAfterMs: 100 };
    const short = quotaHeadroom(state.rate, share, now, tokens);
    if (short !== null) return { granted: false, reason: short, retryAfterMs: 1_000 };
    state.held += 1;
    state.rate.add(now, tokens);
    let released = false;
    const slot: HeldSlot = {
      release: () => {
        if (released) return;
        released = true;
        state.held = Math.max(0, state.held - 1);
      },
    };
    return { granted: true, slot };
  }

  private recovered(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.options.logger.info('fleet limiter: Redis answers again; limits are fleet-wide again');
  }

  private hold(target: string, holder: string): void {
    const holders = this.held.get(target) ?? new Set<string>();
    holders.add(holder);
    this.held.set(target, holders);
    if (this.renewTimer === undefined && !this.closed) {
      this.renewTimer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.options.settings().slotTtlMs / 3)));
      this.renewTimer.unref();
    }
  }

  private async renew(): Promise<void> {
    const { slotTtlMs } = this.options.settings();
    await Promise.all(
      [...this.held].map(async ([target, holders]) => {
        if (holders.size === 0) return;
        const keys = limiterKeys(this.options.keyPrefix, target);
        try {
          // Read when sent: a slot released while the first try was in flight must not be renewed back in.
          await this.run(RENEW_SCRIPT, [keys.slots], () => [this.nowArg(), slotTtlMs, ...holders]);
        } catch (error) {
          this.options.logger.warn({ err: String(error), target }, 'fleet limiter: could not renew held slots; they lapse with their TTL unless a later renewal lands');
        }
      }),
    );
  }

  private async refreshLiveProcesses(): Promise<void> {
    const now = Date.now();
    if (now - this.processesReadAt < LIVE_PROCESSES_REFRESH_MS) return;
    this.processesReadAt = now;
    try {
      this.knownProcesses = Math.max(1, await this.withDeadline(this.options.liveProcesses()));
    } catch {
      // The last count stays.
    }
  }

  private nowArg(): string {
    return this.options.clock === undefined ? '' : String(this.options.clock.now());
  }

  /**
   * EVALSHA, loading the script with EVAL the first time a server does not know it (a new or
   * restarted Redis). The arguments are built for each send, so the retry carries the state of
   * its own moment.
   */
  private async run(script: string, keys: string[], args: () => (string | number)[]): Promise<unknown> {
    let sha = this.shas.get(script);
    if (sha === undefined) {
      sha = createHash('sha1').update(script).digest('hex');
      this.shas.set(script, sha);
    }
    try {
      return await this.withDeadline(this.options.redis.evalsha(sha, keys.length, ...keys, ...args()));
    } catch (error) {
      if (!String(error).includes('NOSCRIPT')) throw error;
      return await this.withDeadline(this.options.redis.eval(script, keys.length, ...keys, ...args()));
    }
  }

  private withDeadline<T>(promise: Promise<T>): Promise<T> {
    const ms = this.options.settings().redisTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
    });
    return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
  }
}
