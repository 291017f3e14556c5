-- A job submitted while nothing waits for admission is written admitted (`pending`) by the
-- statement that inserts it, instead of `queued` and then flipped by an admission pass (a peek,
-- the admit under the lock, and a second write of every row of the job). Bench 1 ran 276–298
-- tasks/s with the pass at every submission and 386–480 without admission at all
-- (docs/BENCHMARKS.md, bench 1, session 6).
--
-- The decision is the one a pass would make right after the insert: with no other job queued,
-- a pass sees only this one, and admits it exactly when its tenant runs fewer jobs than its
-- limit and the fleet fewer than the global limit (decideAdmission). With any job queued the
-- answer is no, and the job goes in `queued` and through a pass as before, so the order between
-- waiting jobs (first in, first out per tenant, fair across tenants) is untouched.
--
-- The check takes the admission lock, as every pass does, and holds it to the end of the
-- inserting transaction: the counts it reads (a fresh snapshot per statement inside this VOLATILE
-- function, taken after the lock) include every admission committed before, and no pass or
-- other insert can admit between the check and this job's commit.
CREATE OR REPLACE FUNCTION switchyard_may_admit_new_job(p_tenant text, p_tenant_limit integer, p_global integer) RETURNS boolean AS $$
BEGIN
  -- A backlog answers no without waiting for the lock (a pass decides those jobs anyway); the
  -- check again under the lock is the one that counts.
  IF EXISTS (SELECT 1 FROM agent_task_state WHERE parent_task_id IS NULL AND status = 'queued') THEN
    RETURN false;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('switchyard:admission'));
  IF EXISTS (SELECT 1 FROM agent_task_state WHERE parent_task_id IS NULL AND status = 'queued') THEN
    RETURN false;
  END IF;
  RETURN (SELECT count(*) FROM agent_task_state
          WHERE parent_task_id IS NULL AND tenant_id = p_tenant AND status IN ('pending', 'running', 'paused')) < p_tenant_limit
     AND (SELECT count(*) FROM agent_task_state
          WHERE parent_task_id IS NULL AND status IN ('pending', 'running', 'paused')) < p_global;
END;
$$ LANGUAGE plpgsql VOLATILE;
--> statement-breakpoint
-- switchyard_admit of 0010 again, with one change: the flip finds the admitted jobs' rows by
-- job (agent_task_state_job_idx) whatever the statistics say. Compared as text, the status no
-- longer matches the partial status indexes, which the planner took while its statistics said
-- few rows were queued (fresh after an ANALYZE of a quiet table) and then walked every queued
-- row of the backlog for each admitted job (auto_explain in bench 1, session 6).
-- Admits those of the jobs p_jobs that are still queued (root and tasks from `queued` to
-- `pending`), if the limits hold with them admitted; returns whether it did, the jobs it
-- admitted (OUT jobs, in p_jobs' order) and their tasks that may start now (as ADMIT_SQL in
-- admission.repository.ts). The limits: with p_limits (each chosen job's tenant: its running
-- limit) and p_global (the fleet's), the running counts now plus the admitted jobs stay within
-- them; without, no tenant may run more jobs now than in p_running, the counts the decision saw
-- (then any admission since the read refuses this one).
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
  WHERE EXISTS (SELECT 1 FROM agent_task_state r WHERE r.task_id = j.job_id AND r.parent_task_id IS NULL AND r.status = 'queued');
  SELECT coalesce(jsonb_object_agg(c.tenant_id, c.n), '{}'::jsonb) INTO v_running FROM (
    SELECT tenant_id, count(*)::int AS n FROM agent_task_state
    WHERE parent_task_id IS NULL AND status IN ('pending', 'running', 'paused')
    GROUP BY tenant_id) c;
  IF p_limits IS NULL THEN
    IF cardinality(jobs) < cardinality(p_jobs)
       OR EXISTS (SELECT 1 FROM jsonb_each_text(v_running) AS c(tenant_id, n) WHERE c.n::int > coalesce((p_running ->> c.tenant_id)::int, 0)) THEN
      admitted := false;
      jobs := '{}';
      RETURN;
    END IF;
  ELSIF EXISTS (
    SELECT 1 FROM (
      SELECT tenant_id, count(*)::int AS n FROM agent_task_state
      WHERE task_id = any(jobs) AND parent_task_id IS NULL GROUP BY tenant_id) c
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
