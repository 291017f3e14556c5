CREATE TABLE "job_degradation" (
	"job_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"reason" text NOT NULL,
	"detail" jsonb NOT NULL,
	"since" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "job_degradation" ADD CONSTRAINT "job_degradation_job_id_agent_task_state_task_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."agent_task_state"("task_id") ON DELETE cascade ON UPDATE no action;