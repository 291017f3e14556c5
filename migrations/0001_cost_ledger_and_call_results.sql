CREATE TABLE "model_call_ledger" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"source" text NOT NULL,
	"tenant_id" text NOT NULL,
	"job_id" uuid,
	"task_id" uuid,
	"step" integer,
	"business_type" text,
	"target" text NOT NULL,
	"target_type" text NOT NULL,
	"model" text NOT NULL,
	"rule" text NOT NULL,
	"outcome" text NOT NULL,
	"error_class" text,
	"http_status" integer,
	"input_tokens" integer DEFAULT 0 NOT NULL,
	"output_tokens" integer DEFAULT 0 NOT NULL,
	"usage_estimated" boolean DEFAULT false NOT NULL,
	"latency_ms" real NOT NULL,
	"first_token_ms" real,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"trace_id" text
);
--> statement-breakpoint
CREATE TABLE "model_call_results" (
	"idempotency_key" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"task_id" text,
	"content" text NOT NULL,
	"target" text NOT NULL,
	"model" text NOT NULL,
	"rule" text NOT NULL,
	"usage" jsonb NOT NULL,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "model_call_ledger_tenant_at_idx" ON "model_call_ledger" USING btree ("tenant_id","at");--> statement-breakpoint
CREATE INDEX "model_call_ledger_target_at_idx" ON "model_call_ledger" USING btree ("target","at");--> statement-breakpoint
CREATE INDEX "model_call_ledger_job_idx" ON "model_call_ledger" USING btree ("job_id") WHERE "model_call_ledger"."job_id" is not null;