import { eq, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { jobCallback, webhookOutbox, type WebhookOutboxRow } from '../schema';

/**
 * The job callbacks and their delivery outbox. Outbox rows are written by the task table's
 * trigger when a job with a callback reaches a terminal status; the delivery loop claims them.
 */
export class WebhookOutboxRepository {
  constructor(private readonly db: Database) {}

  /** Records a job's callback URL; call it before the job can start, so its end finds it. */
  async setCallback(tenantId: string, jobId: string, url: string): Promise<void> {
    await this.db.insert(jobCallback).values({ jobId, tenantId, url }).onConflictDoNothing();
  }

  /**
   * Claims up to `limit` due deliveries (`FOR UPDATE SKIP LOCKED`: concurrent loops take
   * disjoint rows) and pushes their due time `leaseMs` ahead, counting the attempt. The claim
   * is durable without a held transaction: a loop that dies mid-delivery leaves the row due
   * again once the lease runs out, and another loop delivers it.
   */
  async claimDue(limit: number, leaseMs: number): Promise<WebhookOutboxRow[]> {
    const result = await this.db.execute<Record<string, unknown>>(sql`
      with due as (
        select id from webhook_outbox
        where delivered_at is null and next_attempt_at <= now()
        order by next_attempt_at, id
        limit ${limit}
        for update skip locked
      )
      update webhook_outbox o set attempts = o.attempts + 1,
        next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000})
      from due where o.id = due.id
      returning o.id, o.job_id, o.tenant_id, o.url, o.status, o.attempts`);
    return result.rows.map((r) => ({
      id: Number(r.id),
      jobId: r.job_id as string,
      tenantId: r.tenant_id as string,
      url: r.url as string,
      status: r.status as string,
      attempts: Number(r.attempts),
      nextAttemptAt: new Date(),
      lastError: null,
      lastHttpStatus: null,
      deliveredAt: null,
      createdAt: new Date(),
    }));
  }

  async markDelivered(id: number, httpStatus: number): Promise<void> {
    await this.db
      .update(webhookOutbox)
      .set({ deliveredAt: sql`now()`, lastHttpStatus: httpStatus, lastError: null })
      .where(eq(webhookOutbox.id, id));
  }

  /** A failed attempt: kept with its error, due again after `retryInMs`. */
  async markFailed(id: number, error: string, httpStatus: number | null, retryInMs: number): Promise<void> {
    await this.db
      .update(webhookOutbox)
      .set({ lastError: error.slice(0, 1_000), lastHttpStatus: httpStatus, nextAttemptAt: sql`now() + make_interval(secs => ${retryInMs / 1000})` })
      .where(eq(webhookOutbox.id, id));
  }

  async deliveriesOf(jobId: string): Promise<WebhookOutboxRow[]> {
    return this.db.select().from(webhookOutbox).where(eq(webhookOutbox.jobId, jobId));
  }
}
