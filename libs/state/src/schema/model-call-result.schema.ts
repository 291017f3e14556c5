import { doublePrecision, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Answers already paid for, by idempotency key (task, step, call of the step). A step that
 * is replayed after a crash finds its answer here instead of calling the upstream again.
 * Postgres, not Redis: the answer must survive whatever the queue loses.
 */
export const modelCallResults = pgTable('model_call_results', {
  idempotencyKey: text('idempotency_key').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  taskId: text('task_id'),
  content: text('content').notNull(),
  target: text('target').notNull(),
  model: text('model').notNull(),
  rule: text('rule').notNull(),
  usage: jsonb('usage').$type<{ inputTokens: number; outputTokens: number }>().notNull(),
  costUsd: doublePrecision('cost_usd').notNull().default(0),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
});

export type ModelCallResultRow = typeof modelCallResults.$inferSelect;
