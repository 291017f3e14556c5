-- Indexes for the read paths at millions of task rows (docs/BENCHMARKS.md, bench rows-1m):
-- the job lists by tenant and status, across tenants, across tenants by status; the admin
-- task list by status and by resumption, newest change first. The migrator runs every
-- migration in one transaction, so these are plain CREATE INDEX (writes to agent_task_state
-- wait while they build). On a large table, create them beforehand with
-- CREATE INDEX CONCURRENTLY under the same names (docs/OPERATIONS.md): IF NOT EXISTS then
-- skips them here.
DROP INDEX IF EXISTS "agent_task_state_status_idx";--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "agent_task_state_status_updated_idx" ON "agent_task_state" USING btree ("status","updated_at");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "agent_task_state_tenant_status_jobs_idx" ON "agent_task_state" USING btree ("tenant_id","status","created_at" DESC NULLS LAST,"task_id" DESC NULLS LAST) WHERE "agent_task_state"."parent_task_id" is null;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "agent_task_state_jobs_idx" ON "agent_task_state" USING btree ("created_at" DESC NULLS LAST,"task_id" DESC NULLS LAST) WHERE "agent_task_state"."parent_task_id" is null;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "agent_task_state_status_jobs_idx" ON "agent_task_state" USING btree ("status","created_at" DESC NULLS LAST,"task_id" DESC NULLS LAST) WHERE "agent_task_state"."parent_task_id" is null;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "agent_task_state_resumed_idx" ON "agent_task_state" USING btree ("updated_at") WHERE "agent_task_state"."retry_count" > 0 and "agent_task_state"."parent_task_id" is not null;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "agent_task_state_resumed_unfinished_idx" ON "agent_task_state" USING btree ("updated_at") WHERE "agent_task_state"."retry_count" > 0 and "agent_task_state"."status" in ('pending', 'running', 'paused') and "agent_task_state"."parent_task_id" is not null;
