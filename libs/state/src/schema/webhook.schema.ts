import { sql } from 'drizzle-orm';
import { bigserial, index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { agentTaskState } from './agent-task-state.schema';

/** A job's `callback_url` (SPEC §6), kept beside the job so the terminal-status trigger can read it. */
export const jobCallback = pgTable('job_callback', {
  jobId: uuid('job_id')
    .primaryKey()
    .references(() => agentTaskState.taskId, { onDelete: 'cascade' }),
  tenantId: text('tenant_id').notNull(),
  url: text('url').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
});

/**
 * Webhook deliveries still owed or done. A row is written by a trigger in the same transaction
 * that gives a job with a callback its terminal status, so no path to a terminal status can
 * skip it; the delivery loop claims due rows and retries until a 2xx.
 */
export const webhookOutbox = pgTable(
  'webhook_outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    jobId: uuid('job_id').notNull(),
    tenantId: text('tenant_id').notNull(),
    url: text('url').notNull(),
    /** The job's terminal status when the row was written. */
    status: text('status').notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
    lastError: text('last_error'),
    lastHttpStatus: integer('last_http_status'),
    deliveredAt: timestamp('delivered_at', { withTimezone: true, mode: 'date', precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
  },
  (table) => [
    // The delivery loop's scan: undelivered rows by due time.
    index('webhook_outbox_due_idx').on(table.nextAttemptAt).where(sql`${table.deliveredAt} is null`),
    index('webhook_outbox_job_idx').on(table.jobId),
  ],
);

export type WebhookOutboxRow = typeof webhookOutbox.$inferSelect;
