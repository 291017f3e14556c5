import type { ProviderChoice } from '@switchyard/router';
import { createHash, randomUUID } from 'node:crypto';
import type { RedisConnection } from '@switchyard/platform';

/** What the gateway keeps of an answer, enough to answer again without paying for it. */
export interface StoredAnswer {
  content: string;
  model: string;
  target: string;
  usage: { inputTokens: number; outputTokens: number };
  /** Choice 0's finish_reason (absent in answers stored before it was kept: `stop`). */
  finishReason?: string;
  /** Every choice with its tool calls, when there is more than plain text in choice 0. */
  choices?: ProviderChoice[];
}

const PENDING = 'pending';

export type IdempotencyClaim = { kind: 'claimed'; owner: string } | { kind: 'answered'; answer: StoredAnswer } | { kind: 'in_progress' } | { kind: 'mismatch' };

/** Extends or deletes a pending claim only while it is still this owner's (its lease may have lapsed and been taken). */
const RENEW_IF_OWNER = `
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local record = cjson.decode(raw)
if record.state ~= 'pending' or record.owner ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])`;

const DELETE_IF_OWNER = `
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local record = cjson.decode(raw)
if record.state ~= 'pending' or record.owner ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`;

/**
 * The gateway's Redis side: a response cache keyed by what makes an answer reusable
 * (messages, temperature, max_tokens, business_type — per tenant), and `Idempotency-Key`
 * records that tie a key to the body's fingerprint and, once known, the answer. A key being
 * answered is held by a short lease its call renews; if the process dies, the lease lapses
 * and the client's retry proceeds.
 */
export class GatewayResponseStore {
  constructor(
    private readonly redis: RedisConnection,
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

  /**
   * Claims a key for this body with a lease of `leaseMs`, or says what is already there. One
   * SET NX: two racing requests cannot both claim.
   */
  async claim(tenant: string, key: string, fingerprint: string, leaseMs: number): Promise<IdempotencyClaim> {
    const redisKey = this.idempotencyKey(tenant, key);
    const owner = randomUUID();
    const set = await this.redis.set(redisKey, JSON.stringify({ fingerprint, state: PENDING, owner }), 'PX', leaseMs, 'NX');
    if (set === 'OK') return { kind: 'claimed', owner };
    const raw = await this.redis.get(redisKey);
    if (raw === null) return this.claim(tenant, key, fingerprint, leaseMs);
    const record = JSON.parse(raw) as { fingerprint: string; state: string; answer?: StoredAnswer };
    if (record.fingerprint !== fingerprint) return { kind: 'mismatch' };
    return record.answer === undefined ? { kind: 'in_progress' } : { kind: 'answered', answer: record.answer };
  }

  /** The call is still running: its claim lives `leaseMs` more. False when the claim is no longer this owner's. */
  async renew(tenant: string, key: string, owner: string, leaseMs: number): Promise<boolean> {
    return (await this.redis.eval(RENEW_IF_OWNER, 1, this.idempotencyKey(tenant, key), owner, String(leaseMs))) === 1;
  }

  /** The answer replaces the claim, kept for the full idempotency TTL. */
  async complete(tenant: string, key: string, fingerprint: string, answer: StoredAnswer, ttlS: number): Promise<void> {
    await this.redis.set(this.idempotencyKey(tenant, key), JSON.stringify({ fingerprint, state: 'done', answer }), 'EX', ttlS);
  }

  /** The call failed: the key is free for the client's retry (unless the claim is no longer this owner's). */
  async release(tenant: string, key: string, owner: string): Promise<void> {
    await this.redis.eval(DELETE_IF_OWNER, 1, this.idempotencyKey(tenant, key), owner);
  }

  private idempotencyKey(tenant: string, key: string): string {
    return `${this.prefix}idem:${tenant}:${createHash('sha256').update(key).digest('base64url')}`;
  }
}
