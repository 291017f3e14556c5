ALTER TYPE "public"."task_status" ADD VALUE 'queued';--> statement-breakpoint
CREATE TABLE "job_callback" (
	"job_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"url" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"job_id" uuid NOT NULL,
	"tenant_id" text NOT NULL,
	"url" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"last_http_status" integer,
	"delivered_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "job_degradation" (
	"job_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"reason" text NOT NULL,
	"detail" jsonb NOT NULL,
	"since" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "job_callback" ADD CONSTRAINT "job_callback_job_id_agent_task_state_task_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."agent_task_state"("task_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "job_degradation" ADD CONSTRAINT "job_degradation_job_id_agent_task_state_task_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."agent_task_state"("task_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_outbox_due_idx" ON "webhook_outbox" USING btree ("next_attempt_at") WHERE "webhook_outbox"."delivered_at" is null;--> statement-breakpoint
CREATE INDEX "webhook_outbox_job_idx" ON "webhook_outbox" USING btree ("job_id");