import { sql } from 'drizzle-orm';
import { bigserial, boolean, doublePrecision, index, integer, pgTable, real, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/**
 * The cost ledger: one row per upstream attempt, whoever made it (a worker's agent step or
 * the gateway). The gateway's rows are written off the hot path in batches; a worker's job
 * calls write each attempt's row before its request is sent (`in_flight`, keyed by
 * `attempt_id`) and complete it with the paid-once answer, so a killed worker loses none.
 * Read by `GET /admin/costs`.
 */
export const modelCallLedger = pgTable(
  'model_call_ledger',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: timestamp('at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
    source: text('source').notNull(), // 'worker' | 'gateway'
    tenantId: text('tenant_id').notNull(),
    jobId: uuid('job_id'),
    taskId: uuid('task_id'),
    step: integer('step'),
    businessType: text('business_type'),
    target: text('target').notNull(),
    targetType: text('target_type').notNull(),
    model: text('model').notNull(),
    rule: text('rule').notNull(),
    outcome: text('outcome').notNull(), // 'ok' | 'error' | 'bad_output' | 'in_flight' | 'abandoned'
    errorClass: text('error_class'),
    httpStatus: integer('http_status'),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    usageEstimated: boolean('usage_estimated').notNull().default(false),
    latencyMs: real('latency_ms').notNull(),
    firstTokenMs: real('first_token_ms'),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    traceId: text('trace_id'),
    /** Set on rows written before the attempt was sent (a worker's job calls); the row is completed under it. */
    attemptId: text('attempt_id'),
  },
  (table) => [
    index('model_call_ledger_tenant_at_idx').on(table.tenantId, table.at),
    index('model_call_ledger_target_at_idx').on(table.target, table.at),
    index('model_call_ledger_job_idx').on(table.jobId).where(sql`${table.jobId} is not null`),
    uniqueIndex('model_call_ledger_attempt_idx').on(table.attemptId).where(sql`${table.attemptId} is not null`),
    index('model_call_ledger_in_flight_idx').on(table.taskId).where(sql`${table.outcome} = 'in_flight'`),
  ],
);

export type LedgerRow = typeof modelCallLedger.$inferSelect;
export type NewLedgerRow = typeof modelCallLedger.$inferInsert;
