-- What admission decides on, in a table of its own: one row per job that is queued or running
-- (admitted, not yet finished), kept by triggers on the job's root row in the transaction that
-- changes it, so it is exactly the roots' own state as every snapshot sees it.
--
-- Before, every admission pass read it from agent_task_state: the running jobs per tenant
-- counted over the status index of all root rows, and the queued heads of each tenant ranked over
-- every queued root of the backlog, 240 buffers per pass in bench 1; the pass's check that its
-- chosen jobs were still queued walked the whole backlog's status index for each one (the
-- planner's statistics said few rows were queued), 180 buffers more. Together with the check at
-- each submission, a quarter of bench 1's Postgres buffer reads (docs/BENCHMARKS.md, bench 1,
-- session 8). This table holds at most the running limit plus the backlog, whatever the history.
CREATE TABLE IF NOT EXISTS job_admission (
  job_id uuid PRIMARY KEY,
  tenant_id text NOT NULL,
  created_at timestamp (3) with time zone NOT NULL,
  queued boolean NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS job_admission_queued_idx ON job_admission (tenant_id, created_at, job_id) WHERE queued;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS job_admission_running_idx ON job_admission (tenant_id) WHERE NOT queued;
--> statement-breakpoint
INSERT INTO job_admission (job_id, tenant_id, created_at, queued)
  SELECT task_id, tenant_id, created_at, status::text = 'queued' FROM agent_task_state
  WHERE parent_task_id IS NULL AND status::text IN ('queued', 'pending', 'running', 'paused')
  ON CONFLICT (job_id) DO NOTHING;
--> statement-breakpoint
-- A job's row follows its root: queued, running (pending, running, paused: it holds a slot), or
-- gone (finished, or the root deleted). Only changes between those three call it (the triggers'
-- WHEN), so a task row, or a root going from pending to running, costs nothing here.
CREATE OR REPLACE FUNCTION switchyard_track_admission() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM job_admission WHERE job_id = OLD.task_id;
  ELSIF NEW.status::text IN ('queued', 'pending', 'running', 'paused') THEN
    INSERT INTO job_admission (job_id, tenant_id, created_at, queued)
    VALUES (NEW.task_id, NEW.tenant_id, NEW.created_at, NEW.status::text = 'queued')
    ON CONFLICT (job_id) DO UPDATE SET queued = excluded.queued;
  ELSE
    DELETE FROM job_admission WHERE job_id = NEW.task_id;
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER agent_task_state_admission_inserted
  AFTER INSERT ON agent_task_state
  FOR EACH ROW
  WHEN (NEW.parent_task_id IS NULL AND NEW.status::text IN ('queued', 'pending', 'running', 'paused'))
  EXECUTE FUNCTION switchyard_track_admission();
--> statement-breakpoint
CREATE TRIGGER agent_task_state_admission_changed
  AFTER UPDATE OF status ON agent_task_state
  FOR EACH ROW
  WHEN (NEW.parent_task_id IS NULL AND (
    (OLD.status::text = 'queued') IS DISTINCT FROM (NEW.status::text = 'queued')
    OR (OLD.status::text IN ('queued', 'pending', 'running', 'paused')) IS DISTINCT FROM (NEW.status::text IN ('queued', 'pending', 'running', 'paused'))))
  EXECUTE FUNCTION switchyard_track_admission();
--> statement-breakpoint
CREATE TRIGGER agent_task_state_admission_deleted
  AFTER DELETE ON agent_task_state
  FOR EACH ROW
  WHEN (OLD.parent_task_id IS NULL AND OLD.status::text IN ('queued', 'pending', 'running', 'paused'))
  EXECUTE FUNCTION switchyard_track_admission();
--> statement-breakpoint
-- TRUNCATE fires no row trigger: emptied with the task table, not left holding phantom running jobs.
CREATE OR REPLACE FUNCTION switchyard_clear_admission() RETURNS trigger AS $$
BEGIN
  TRUNCATE job_admission;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER agent_task_state_admission_truncated
  AFTER TRUNCATE ON agent_task_state
  FOR EACH STATEMENT
  EXECUTE FUNCTION switchyard_clear_admission();
--> statement-breakpoint
-- The snapshot of 0010 from job_admission, and with p_global (the fleet's running limit) it reads
-- no more heads per tenant than the fleet has free slots: a pass at a job's end, when one slot
-- came free, reads one head per tenant instead of ranking the whole backlog.
DROP FUNCTION IF EXISTS switchyard_admission_snapshot(integer);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION switchyard_admission_snapshot(p_heads integer, p_global integer DEFAULT NULL, OUT running jsonb, OUT queued jsonb) AS $$
#variable_conflict use_column
BEGIN
  -- One statement: both halves from one snapshot.
  WITH RECURSIVE counts AS (
    SELECT tenant_id, count(*)::int AS n FROM job_admission WHERE NOT queued GROUP BY tenant_id
  ), heads AS (
    SELECT CASE WHEN p_global IS NULL THEN p_heads
                ELSE least(p_heads, greatest(p_global - (SELECT coalesce(sum(n), 0) FROM counts), 0)) END::int AS n
  ), waiting AS (
    -- The tenants with a queued job, one index probe each (a skip scan), however long the backlog.
    (SELECT tenant_id FROM job_admission WHERE queued ORDER BY tenant_id LIMIT 1)
    UNION ALL
    SELECT (SELECT q.tenant_id FROM job_admission q WHERE q.queued AND q.tenant_id > w.tenant_id ORDER BY q.tenant_id LIMIT 1)
    FROM waiting w WHERE w.tenant_id IS NOT NULL
  )
  SELECT
    (SELECT coalesce(jsonb_object_agg(c.tenant_id, c.n), '{}'::jsonb) FROM counts c),
    (SELECT coalesce(jsonb_agg(jsonb_build_object('jobId', h.job_id, 'tenantId', h.tenant_id) ORDER BY h.created_at, h.job_id), '[]'::jsonb)
     FROM (SELECT tenant_id FROM waiting WHERE tenant_id IS NOT NULL) w CROSS JOIN LATERAL (
       SELECT q.job_id, q.tenant_id, q.created_at FROM job_admission q
       WHERE q.queued AND q.tenant_id = w.tenant_id
       ORDER BY q.created_at, q.job_id LIMIT (SELECT n FROM heads)) h)
  INTO running, queued;
END;
$$ LANGUAGE plpgsql VOLATILE;
--> statement-breakpoint
-- 0012's check at a job's insert, from job_admission.
CREATE OR REPLACE FUNCTION switchyard_may_admit_new_job(p_tenant text, p_tenant_limit integer, p_global integer) RETURNS boolean AS $$
BEGIN
  -- A backlog answers no without waiting for the lock (a pass decides those jobs anyway); the
  -- check again under the lock is the one that counts.
  IF EXISTS (SELECT 1 FROM job_admission WHERE queued) THEN
    RETURN false;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('switchyard:admission'));
  IF EXISTS (SELECT 1 FROM job_admission WHERE queued) THEN
    RETURN false;
  END IF;
  RETURN (SELECT count(*) FROM job_admission WHERE NOT queued AND tenant_id = p_tenant) < p_tenant_limit
     AND (SELECT count(*) FROM job_admission WHERE NOT queued) < p_global;
END;
$$ LANGUAGE plpgsql VOLATILE;
--> statement-breakpoint
-- 0012's switchyard_admit with its checks and counts from job_admission; the flip is unchanged.
CREATE OR REPLACE FUNCTION switchyard_admit(p_running jsonb, p_jobs uuid[], p_limits jsonb, p_global integer,
  OUT admitted boolean, OUT jobs uuid[], OUT ready jsonb) AS $$
DECLARE
  v_running jsonb;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('switchyard:admission'));
  -- The chosen jobs no other pass admitted (or cancelled) since the read. A decision takes each
  -- tenant's jobs oldest first from its oldest queued one, and so does every other pass: what is
  -- left of a tenant's choice still starts at its oldest queued job (first in, first out).
  SELECT coalesce(array_agg(j.job_id ORDER BY j.n), '{}') INTO jobs
  FROM unnest(p_jobs) WITH ORDINALITY AS j(job_id, n)
  WHERE EXISTS (SELECT 1 FROM job_admission a WHERE a.job_id = j.job_id AND a.queued);
  SELECT coalesce(jsonb_object_agg(c.tenant_id, c.n), '{}'::jsonb) INTO v_running FROM (
    SELECT tenant_id, count(*)::int AS n FROM job_admission WHERE NOT queued GROUP BY tenant_id) c;
  IF p_limits IS NULL THEN
    IF cardinality(jobs) < cardinality(p_jobs)
       OR EXISTS (SELECT 1 FROM jsonb_each_text(v_running) AS c(tenant_id, n) WHERE c.n::int > coalesce((p_running ->> c.tenant_id)::int, 0)) THEN
      admitted := false;
      jobs := '{}';
      RETURN;
    END IF;
  ELSIF EXISTS (
    SELECT 1 FROM (
      SELECT tenant_id, count(*)::int AS n FROM job_admission WHERE job_id = any(jobs) GROUP BY tenant_id) c
    WHERE coalesce((v_running ->> c.tenant_id)::int, 0) + c.n > coalesce((p_limits ->> c.tenant_id)::int, 0)
  ) OR (SELECT coalesce(sum(value::int), 0) FROM jsonb_each_text(v_running)) + cardinality(jobs) > p_global THEN
    admitted := false;
    jobs := '{}';
    RETURN;
  END IF;
  WITH flipped AS (
    UPDATE agent_task_state SET status = 'pending', updated_at = now()
    WHERE job_id = any(jobs) AND status::text = 'queued'
    RETURNING task_id, job_id, tenant_id, role, trace_context, queue_job_id, parent_task_id, depends_on, ordinal, created_at
  )
  SELECT coalesce(jsonb_agg(jsonb_build_object('task_id', a.task_id, 'job_id', a.job_id, 'tenant_id', a.tenant_id, 'role', a.role,
      'trace_context', a.trace_context, 'queue_job_id', a.queue_job_id) ORDER BY a.ordinal, a.created_at), '[]'::jsonb)
  INTO ready
  FROM flipped a
  WHERE a.parent_task_id IS NOT NULL AND not exists (
    select 1 from agent_task_state dep
    where dep.task_id = any(a.depends_on)
      and dep.status <> 'success' and not (dep.optional and dep.status in ('skipped', 'failed', 'cancelled')));
  admitted := true;
END;
$$ LANGUAGE plpgsql VOLATILE;
