import { jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { agentTaskState } from './agent-task-state.schema';

/**
 * A job whose calls ran with fewer targets than its routes allow, and why (SPEC §6: a tenant
 * over its daily budget has cloud targets excluded). One row per job and reason; shown by
 * `GET /v1/jobs/:id` as `degraded`.
 */
export const jobDegradation = pgTable('job_degradation', {
  jobId: uuid('job_id')
    .primaryKey()
    .references(() => agentTaskState.taskId, { onDelete: 'cascade' }),
  tenantId: text('tenant_id').notNull(),
  reason: text('reason').notNull(),
  detail: jsonb('detail').$type<Record<string, unknown>>().notNull(),
  since: timestamp('since', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
});
