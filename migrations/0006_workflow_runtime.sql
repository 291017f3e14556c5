ALTER TYPE "public"."task_status" ADD VALUE 'skipped';--> statement-breakpoint
ALTER TABLE "agent_task_state" ADD COLUMN "depends_on" uuid[] DEFAULT '{}'::uuid[] NOT NULL;--> statement-breakpoint
ALTER TABLE "agent_task_state" ADD COLUMN "trace_context" jsonb;--> statement-breakpoint
ALTER TABLE "agent_task_state" ADD COLUMN "workflow_definition" jsonb;--> statement-breakpoint
ALTER TABLE "agent_task_state" ADD COLUMN "workflow_hash" text;