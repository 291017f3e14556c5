import { createHash } from 'node:crypto';
import type { RedisConnection } from '@switchyard/platform';
import type { ConversationRecord } from './conversation-context';

/**
 * Sessions' history in Redis: one JSON value per tenant and session id (hashed: the id is the
 * client's), expiring `ttlS` after the last turn. Two turns of one session at once: the later
 * write wins.
 */
export class ConversationStore {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {}

  async load(tenant: string, sessionId: string): Promise<ConversationRecord | undefined> {
    const raw = await this.redis.get(this.key(tenant, sessionId));
    return raw === null ? undefined : (JSON.parse(raw) as ConversationRecord);
  }

  async save(tenant: string, sessionId: string, record: ConversationRecord, ttlS: number): Promise<void> {
    await this.redis.set(this.key(tenant, sessionId), JSON.stringify(record), 'EX', ttlS);
  }

  /** A short, stable stand-in for the session id in logs. */
  logId(sessionId: string): string {
    return createHash('sha256').update(sessionId).digest('base64url').slice(0, 12);
  }

  private key(tenant: string, sessionId: string): string {
    return `${this.prefix}session:${tenant}:${createHash('sha256').update(sessionId).digest('base64url')}`;
  }
}
