import { sql } from 'drizzle-orm';
import {
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  type AnyPgColumn,
} from 'drizzle-orm/pg-core';
import { TASK_STATUSES, type RouteRecord, type StructuredSummary, type TraceCarrier } from '@switchyard/contracts';

export const taskStatusEnum = pgEnum('task_status', TASK_STATUSES);

/** What a completed step left behind: enough to resume the task at the next step. */
export interface StepCheckpoint {
  step: number;
  name: string;
  summary: unknown;
  completed_at: string;
}

/**
 * The system of record for every job and every task of it. The job is the root row
 * (`parent_task_id` null, `job_id = task_id`); its tasks point at it.
 */
export const agentTaskState = pgTable(
  'agent_task_state',
  {
    taskId: uuid('task_id').primaryKey(),
    parentTaskId: uuid('parent_task_id').references((): AnyPgColumn => agentTaskState.taskId, { onDelete: 'cascade' }),
    jobId: uuid('job_id').notNull(),
    tenantId: text('tenant_id').notNull(),
    jobType: text('job_type').notNull(),
    agentId: text('agent_id').notNull(),
    role: text('role').notNull(),
    status: taskStatusEnum('status').notNull().default('pending'),
    optional: boolean('optional').notNull().default(false),
    /** Position among its siblings (document order for extracts), for stable listing. */
    ordinal: integer('ordinal').notNull().default(0),
    /**
     * Fan-in: the tasks (same job) that must finish first. Claimable when each is `success`, or
     * optional and `skipped`/`failed`/`cancelled` (see `dependenciesDone`).
     */
    dependsOn: uuid('depends_on').array().notNull().default(sql`'{}'::uuid[]`),
    /** The W3C trace context of the submission: a resumed or re-enqueued task continues its job's trace. */
    traceContext: jsonb('trace_context').$type<TraceCarrier>(),
    /**
     * Root rows: the workflow the job was planned with (its definition as JSON, and that JSON's
     * hash). Workers compile and cache it by hash, so a running job keeps its version when the
     * file changes.
     */
    workflowDefinition: jsonb('workflow_definition').$type<Record<string, unknown>>(),
    workflowHash: text('workflow_hash'),
    inputSummary: jsonb('input_summary').$type<Record<string, unknown>>().notNull(),
    outputSummary: jsonb('output_summary').$type<StructuredSummary | Record<string, unknown>>(),
    stepCheckpoints: jsonb('step_checkpoints').$type<StepCheckpoint[]>().notNull().default(sql`'[]'::jsonb`),
    currentStep: integer('current_step').notNull().default(0),
    totalSteps: integer('total_steps').notNull(),
    retryCount: integer('retry_count').notNull().default(0),
    /**
     * `retry_count` when the job was last retried by request (`POST /v1/jobs/:id/retry`): the
     * sweeper's retry limit counts the retries since then, so a retried task gets a fresh budget
     * while `retry_count` (and the queue job ids named after it) keeps counting up.
     */
    retryBase: integer('retry_base').notNull().default(0),
    routeTargets: jsonb('route_targets').$type<RouteRecord[]>().notNull().default(sql`'[]'::jsonb`),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    leaseOwner: text('lease_owner'),
    leaseVersion: integer('lease_version').notNull().default(0),
    /** The BullMQ job id last enqueued for this task by the sweeper (null: the id is the task id). */
    queueJobId: text('queue_job_id'),
    error: text('error'),
    idempotencyKey: text('idempotency_key'),
    requestHash: text('request_hash'),
    // Millisecond precision, like a JS Date: a keyset cursor built from a row's timestamp
    // must compare equal to that row, or rows within one millisecond fall between pages.
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
    /**
     * When the status or the lease last changed, and a running task's heartbeat (SPEC §2). A
     * checkpoint leaves it alone: it changes no indexed column, so Postgres writes it in place
     * (HOT, migration 0013); the heartbeat's own timer keeps a task alive.
     */
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date', precision: 3 }),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date', precision: 3 }),
  },
  (table) => [
    // Tasks of a status, most recently changed first (the admin task list); also every `status =` lookup.
    index('agent_task_state_status_updated_idx').on(table.status, table.updatedAt),
    index('agent_task_state_parent_idx').on(table.parentTaskId),
    index('agent_task_state_job_idx').on(table.jobId),
    // The sweeper's scan: only running rows, oldest heartbeat first, so it costs O(stale).
    index('agent_task_state_running_heartbeat_idx').on(table.updatedAt).where(sql`${table.status} = 'running'`),
    // The sweeper's reconcile pass walks pending rows in this order, a page per sweep: O(pending).
    index('agent_task_state_pending_idx').on(table.updatedAt, table.taskId).where(sql`${table.status} = 'pending'`),
    // The job lists (root rows, newest first, keyset-paginated; see job-list.ts): a tenant's,
    // a tenant's of one status, every tenant's, and every tenant's of one status.
    index('agent_task_state_tenant_jobs_idx')
      .on(table.tenantId, table.createdAt.desc(), table.taskId.desc())
      .where(sql`${table.parentTaskId} is null`),
    index('agent_task_state_tenant_status_jobs_idx')
      .on(table.tenantId, table.status, table.createdAt.desc(), table.taskId.desc())
      .where(sql`${table.parentTaskId} is null`),
    index('agent_task_state_jobs_idx').on(table.createdAt.desc(), table.taskId.desc()).where(sql`${table.parentTaskId} is null`),
    index('agent_task_state_status_jobs_idx')
      .on(table.status, table.createdAt.desc(), table.taskId.desc())
      .where(sql`${table.parentTaskId} is null`),
    // The admin task list's resumed tasks, most recently changed first: all of them, and the unfinished ones.
    index('agent_task_state_resumed_idx').on(table.updatedAt).where(sql`${table.retryCount} > 0 and ${table.parentTaskId} is not null`),
    index('agent_task_state_resumed_unfinished_idx')
      .on(table.updatedAt)
      .where(sql`${table.retryCount} > 0 and ${table.status} in ('pending', 'running', 'paused') and ${table.parentTaskId} is not null`),
    uniqueIndex('agent_task_state_idempotency_idx')
      .on(table.tenantId, table.idempotencyKey)
      .where(sql`${table.parentTaskId} is null and ${table.idempotencyKey} is not null`),
  ],
);

export type TaskRow = typeof agentTaskState.$inferSelect;
export type NewTaskRow = typeof agentTaskState.$inferInsert;
