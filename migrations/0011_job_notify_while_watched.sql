-- The per-task `switchyard_job` notification only while someone watches the job (an SSE stream,
-- GET /v1/jobs/:id/events). A NOTIFY is not free: every transaction that sends one takes a
-- cluster-wide lock at commit (the notify queue's), so task writes of all workers took turns
-- there. Bench 9 at 4 workers sampled it as the most common lock wait ("Lock: object", 144
-- backend-samples of 314); bench 1 ran 443–468 tasks/s with it and 524–527 without it
-- (docs/BENCHMARKS.md, bench 1, session 6). Jobs nobody watches now cost one index probe
-- of a table that is almost always empty.
--
-- job_watch is UNLOGGED: its rows are hints, renewed by the watching supervisor every few
-- seconds (INSERT … ON CONFLICT, so a crash that empties the table is repaired by the next
-- renewal), and a stream also polls, so a missed notification only delays an event. A row
-- whose supervisor died expires: the trigger ignores it and the next renewal of any
-- supervisor deletes it.
CREATE UNLOGGED TABLE IF NOT EXISTS job_watch (
  job_id uuid NOT NULL,
  watcher text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (job_id, watcher)
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS job_watch_expires_idx ON job_watch (expires_at);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION switchyard_task_changed() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM job_watch w WHERE w.job_id = NEW.job_id AND w.expires_at > now()) THEN
    PERFORM pg_notify('switchyard_job', NEW.job_id::text);
  END IF;
  IF NEW.parent_task_id IS NULL
     AND NEW.status::text IN ('success', 'failed', 'cancelled')
     AND OLD.status::text NOT IN ('success', 'failed', 'cancelled') THEN
    INSERT INTO webhook_outbox (job_id, tenant_id, url, status)
      SELECT c.job_id, c.tenant_id, c.url, NEW.status::text FROM job_callback c WHERE c.job_id = NEW.task_id;
    IF FOUND THEN
      PERFORM pg_notify('switchyard_webhook', NEW.task_id::text);
    END IF;
    PERFORM pg_notify('switchyard_admission', NEW.task_id::text);
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
