-- One trigger on the task table, kept cheap: it runs only when a row's status or current_step
-- changes. It tells listeners which job moved (the SSE stream), and when a job's root row
-- reaches a terminal status it writes the webhook outbox row in that same transaction (every
-- path to a terminal status is covered: complete, fail, cancel, the sweeper) and wakes the
-- admission pass, since a running slot is free.
CREATE OR REPLACE FUNCTION switchyard_task_changed() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('switchyard_job', NEW.job_id::text);
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
--> statement-breakpoint
CREATE TRIGGER agent_task_state_changed
  AFTER UPDATE OF status, current_step ON agent_task_state
  FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.current_step IS DISTINCT FROM NEW.current_step)
  EXECUTE FUNCTION switchyard_task_changed();
