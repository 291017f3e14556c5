-- An admission pass in two statements instead of five (docs/BENCHMARKS.md, bench 1, session 5).
-- A pass used to be: begin, the advisory lock, a snapshot (running jobs per tenant, the queued
-- heads), the admit, commit, with the decision (the supervisor's, in TypeScript: tenants'
-- limits and fairness) between the snapshot and the admit. Now the supervisor reads the
-- snapshot without the lock (switchyard_admission_snapshot), decides, and asks switchyard_admit
-- to admit its choice. The function takes the lock and checks, with a fresh snapshot (a
-- VOLATILE plpgsql function under READ COMMITTED takes one per statement, after the lock):
--   * it admits only the chosen jobs still queued (another pass may have admitted some
--     meanwhile): a decision takes each tenant's jobs oldest first from its oldest queued one,
--     so what is left of a choice is still admitted first in, first out; and
--   * the limits hold with the chosen jobs admitted, on the counts now (the supervisor passes
--     each chosen tenant's limit and the fleet's; without them, the check is stricter: no
--     tenant may run more jobs now than the decision saw).
-- Limits are never exceeded: the check and the admit run under the lock, as every pass's do.
-- The choice between tenants is the one a pass under the lock would have made at the moment of
-- the read (a pass that admitted in between may make it slightly less fair, never unsafe). Otherwise
-- nothing is written and the supervisor decides again (AdmissionRepository.admit, which falls
-- back to the pass under the lock after a few tries).
--
-- The admit's fan-in clause is the text of dependenciesDoneSql('a') in
-- libs/state/src/repositories/task-clauses.ts, verbatim; a unit test keeps them equal.
CREATE OR REPLACE FUNCTION switchyard_admission_snapshot(p_heads integer, OUT running jsonb, OUT queued jsonb) AS $$
BEGIN
  -- One statement: both halves from one snapshot.
  SELECT
    (SELECT coalesce(jsonb_object_agg(c.tenant_id, c.n), '{}'::jsonb) FROM (
      SELECT tenant_id, count(*)::int AS n FROM agent_task_state
      WHERE parent_task_id IS NULL AND status IN ('pending', 'running', 'paused')
      GROUP BY tenant_id) c),
    (SELECT coalesce(jsonb_agg(jsonb_build_object('jobId', q.job_id, 'tenantId', q.tenant_id) ORDER BY q.created_at, q.job_id), '[]'::jsonb) FROM (
      SELECT task_id AS job_id, tenant_id, created_at,
        row_number() OVER (PARTITION BY tenant_id ORDER BY created_at, task_id) AS k
      FROM agent_task_state WHERE parent_task_id IS NULL AND status = 'queued') q
     WHERE q.k <= p_heads)
  INTO running, queued;
END;
$$ LANGUAGE plpgsql VOLATILE;
--> statement-breakpoint
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
    WHERE job_id = any(jobs) AND status = 'queued'
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
