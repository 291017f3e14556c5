CREATE TYPE "public"."task_status" AS ENUM('pending', 'running', 'success', 'failed', 'paused', 'cancelled');--> statement-breakpoint
CREATE TABLE "agent_task_state" (
	"task_id" uuid PRIMARY KEY NOT NULL,
	"parent_task_id" uuid,
	"job_id" uuid NOT NULL,
	"tenant_id" text NOT NULL,
	"job_type" text NOT NULL,
	"agent_id" text NOT NULL,
	"role" text NOT NULL,
	"status" "task_status" DEFAULT 'pending' NOT NULL,
	"optional" boolean DEFAULT false NOT NULL,
	"ordinal" integer DEFAULT 0 NOT NULL,
	"input_summary" jsonb NOT NULL,
	"output_summary" jsonb,
	"step_checkpoints" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"current_step" integer DEFAULT 0 NOT NULL,
	"total_steps" integer NOT NULL,
	"retry_count" integer DEFAULT 0 NOT NULL,
	"route_targets" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"lease_owner" text,
	"lease_version" integer DEFAULT 0 NOT NULL,
	"error" text,
	"idempotency_key" text,
	"request_hash" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "agent_task_state" ADD CONSTRAINT "agent_task_state_parent_task_id_agent_task_state_task_id_fk" FOREIGN KEY ("parent_task_id") REFERENCES "public"."agent_task_state"("task_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agent_task_state_status_idx" ON "agent_task_state" USING btree ("status");--> statement-breakpoint
CREATE INDEX "agent_task_state_parent_idx" ON "agent_task_state" USING btree ("parent_task_id");--> statement-breakpoint
CREATE INDEX "agent_task_state_job_idx" ON "agent_task_state" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "agent_task_state_running_heartbeat_idx" ON "agent_task_state" USING btree ("updated_at") WHERE "agent_task_state"."status" = 'running';--> statement-breakpoint
CREATE INDEX "agent_task_state_tenant_jobs_idx" ON "agent_task_state" USING btree ("tenant_id","created_at" DESC NULLS LAST,"task_id" DESC NULLS LAST) WHERE "agent_task_state"."parent_task_id" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "agent_task_state_idempotency_idx" ON "agent_task_state" USING btree ("tenant_id","idempotency_key") WHERE "agent_task_state"."parent_task_id" is null and "agent_task_state"."idempotency_key" is not null;