import type { RedisConnection } from '@switchyard/platform';

const MINUTE_MS = 60_000;

export type RateDecision = { allowed: true } | { allowed: false; retryAfterS: number };

/**
 * A tenant's `gateway_rpm` over fixed UTC minutes: the `count`-th request of the minute
 * containing `nowMs` passes while `count` ≤ `limit`; past it the tenant waits for the next
 * minute (`Retry-After`, whole seconds, at least 1).
 */
export function gatewayRateDecision(count: number, limit: number, nowMs: number): RateDecision {
  if (count <= limit) return { allowed: true };
  const leftMs = MINUTE_MS - (nowMs % MINUTE_MS);
  return { allowed: false, retryAfterS: Math.max(1, Math.ceil(leftMs / 1000)) };
}

/** The fleet-wide count of a tenant's gateway requests this minute (one Redis round trip). */
export class TenantGatewayRate {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keyPrefix: string,
  ) {}

  async count(tenant: string, nowMs: number): Promise<number> {
    const minute = Math.floor(nowMs / MINUTE_MS);
    const key = `${this.keyPrefix}rpm:${tenant}:${minute}`;
    const result = await this.redis.multi().incr(key).pexpire(key, MINUTE_MS + 1_000).exec();
    const [error, value] = result?.[0] ?? [new Error('no reply'), null];
    if (error) throw error;
    return Number(value);
  }
}
