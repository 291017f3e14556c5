import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** What the gateway keeps of an answer, enough to answer again without paying for it. */
export interface StoredAnswer {
  content: string;
  model: string;
  target: string;
  usage: { inputTokens: number; outputTokens: number };
}

const PENDING = 'pending';

export type IdempotencyClaim = { kind: 'claimed' } | { kind: 'answered'; answer: StoredAnswer } | { kind: 'in_progress' } | { kind: 'mismatch' };

/**
 * The gateway's Redis side: a response cache keyed by what makes an answer reusable
 * (messages, temperature, max_tokens, business_type — per tenant), and `Idempotency-Key`
 * records that tie a key to the body's fingerprint and, once known, the answer.
 */
export class GatewayResponseStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  static fingerprint(parts: unknown): string {
    return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
  }

  async cached(tenant: string, cacheKey: string): Promise<StoredAnswer | undefined> {
    const raw = await this.redis.get(`${this.prefix}cache:${tenant}:${cacheKey}`);
    return raw === null ? undefined : (JSON.parse(raw) as StoredAnswer);
  }

  async cache(tenant: string, cacheKey: string, answer: StoredAnswer, ttlS: number): Promise<void> {
    await this.redis.set(`${this.prefix}cache:${tenant}:${cacheKey}`, JSON.stringify(answer), 'EX', ttlS);
  }

  /** Claims a key for this body, or says what is already there. One SET NX: two racing requests cannot both claim. */
  async claim(tenant: string, key: string, fingerprint: string, ttlS: number): Promise<IdempotencyClaim> {
    const redisKey = this.idempotencyKey(tenant, key);
    const set = await this.redis.set(redisKey, JSON.stringify({ fingerprint, state: PENDING }), 'EX', ttlS, 'NX');
    if (set === 'OK') return { kind: 'claimed' };
    const raw = await this.redis.get(redisKey);
    if (raw === null) return this.claim(tenant, key, fingerprint, ttlS);
    const record = JSON.parse(raw) as { fingerprint: string; state: string; answer?: StoredAnswer };
    if (record.fingerprint !== fingerprint) return { kind: 'mismatch' };
    return record.answer === undefined ? { kind: 'in_progress' } : { kind: 'answered', answer: record.answer };
  }

  async complete(tenant: string, key: string, fingerprint: string, answer: StoredAnswer, ttlS: number): Promise<void> {
    await this.redis.set(this.idempotencyKey(tenant, key), JSON.stringify({ fingerprint, state: 'done', answer }), 'EX', ttlS);
  }

  /** The call failed: the key is free for the client's retry. */
  async release(tenant: string, key: string): Promise<void> {
    await this.redis.del(this.idempotencyKey(tenant, key));
  }

  private idempotencyKey(tenant: string, key: string): string {
    return `${this.prefix}idem:${tenant}:${createHash('sha256').update(key).digest('base64url')}`;
  }
}
