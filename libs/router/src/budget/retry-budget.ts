import type { Clock } from '../clock';

export interface RetryBudgetSettings {
  retry_budget_per_job: number;
  retry_budget_per_task: number;
}

/**
 * A job's retry budget: the base (SPEC §3.5: 12 across the whole job) plus a share per task,
 * so that a fan-out job whose tasks all meet one slow moment together does not spend the
 * budget of a small job in one round. A call without a known job size gets the base.
 */
export function retryBudgetLimit(settings: RetryBudgetSettings, jobTaskCount: number | undefined): number {
  return Math.floor(settings.retry_budget_per_job + settings.retry_budget_per_task * Math.max(0, jobTaskCount ?? 0));
}

/**
 * Failed upstream attempts per scope (a job), shared by every worker of the job. The router
 * checks `spent` before every retry and calls `spend` after every failed attempt, so in a
 * storm a job makes at most its budget of failing attempts (plus the ones already in flight)
 * however its calls and task retries are spread; once it is spent, a call makes one trial
 * attempt outside the budget, and a task waits with backoff between its trials.
 */
export interface RetryBudgetStore {
  spent(scope: string): Promise<number>;
  /** Returns the new count. */
  spend(scope: string): Promise<number>;
}

/** For tests and single-process use. Entries expire `ttlMs` after their last spend. */
export class InMemoryRetryBudgetStore implements RetryBudgetStore {
  private readonly counts = new Map<string, { count: number; expiresAt: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs = 24 * 60 * 60_000,
  ) {}

  spent(scope: string): Promise<number> {
    const entry = this.counts.get(scope);
    if (entry === undefined || entry.expiresAt <= this.clock.now()) return Promise.resolve(0);
    return Promise.resolve(entry.count);
  }

  spend(scope: string): Promise<number> {
    const now = this.clock.now();
    const entry = this.counts.get(scope);
    const count = entry === undefined || entry.expiresAt <= now ? 1 : entry.count + 1;
    this.counts.set(scope, { count, expiresAt: now + this.ttlMs });
    return Promise.resolve(count);
  }
}

/** The few Redis commands the store needs (an ioredis client satisfies it). */
export interface RedisCounterClient {
  get(key: string): Promise<string | null>;
  multi(): RedisCounterMulti;
}

export interface RedisCounterMulti {
  incr(key: string): RedisCounterMulti;
  pexpire(key: string, ms: number): RedisCounterMulti;
  exec(): Promise<[Error | null, unknown][] | null>;
}

/** One counter per job in Redis: INCR and PEXPIRE in one MULTI, so every worker sees the same count. */
export class RedisRetryBudgetStore implements RetryBudgetStore {
  constructor(
    private readonly redis: RedisCounterClient,
    private readonly keyPrefix = 'router:',
    private readonly ttlMs = 24 * 60 * 60_000,
  ) {}

  async spent(scope: string): Promise<number> {
    const value = await this.redis.get(this.key(scope));
    return value === null ? 0 : Number(value);
  }

  async spend(scope: string): Promise<number> {
    const key = this.key(scope);
    const results = await this.redis.multi().incr(key).pexpire(key, this.ttlMs).exec();
    const [error, count] = results?.[0] ?? [new Error('MULTI returned nothing'), 0];
    if (error) throw new Error(`retry budget: INCR ${key} failed`, { cause: error });
    return Number(count);
  }

  private key(scope: string): string {
    return `${this.keyPrefix}retry-budget:${scope}`;
  }
}

/**
 * The budget one call consults. With a job scope it is the shared store; a call without a
 * job (the gateway) gets a budget of its own that lives as long as the call.
 */
export class CallRetryBudget {
  private local = 0;

  constructor(
    private readonly store: RetryBudgetStore,
    readonly limit: number,
    private readonly scope: string | undefined,
  ) {}

  async exhausted(): Promise<boolean> {
    const spent = this.scope === undefined ? this.local : await this.store.spent(this.scope);
    return spent >= this.limit;
  }

  /**
   * Counts a failed attempt. True when this one used up the budget: the store's count lands on
   * the limit once per budget, however many calls and workers spend it at the same time.
   */
  async spend(): Promise<boolean> {
    const count = this.scope === undefined ? ++this.local : await this.store.spend(this.scope);
    return count === this.limit;
  }
}
