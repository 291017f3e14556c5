-- switchyard_finish_task of 0009 again, with one change: the ready dependents are found by job
-- (agent_task_state_job_idx) whatever the statistics say. Compared as text, the status no
-- longer matches the partial index of pending rows, which the function's cached (generic) plan
-- ANDed with the job's rows: a bitmap of every entry that index ever had, dead ones included —
-- 6,300 entries and 2.1 ms for one finish after one round of bench 1, growing with the table's
-- history until a vacuum (docs/BENCHMARKS.md, bench 1, session 8). As in 0012 and the claim.
CREATE OR REPLACE FUNCTION switchyard_finish_task(
  p_task_id uuid, p_owner text, p_version integer,
  p_skip boolean, p_step integer, p_checkpoints jsonb, p_routes jsonb, p_cost double precision, p_output jsonb, p_reason text,
  p_complete_job boolean, p_result jsonb,
  OUT outcome text, OUT ready jsonb, OUT outcomes jsonb
) AS $$
#variable_conflict use_column
DECLARE
  v_job uuid;
  v_last boolean;
  v_completed integer := 0;
BEGIN
  -- The fence, and the task row locked: nobody else may finish, release or take it over meanwhile.
  SELECT job_id INTO v_job FROM agent_task_state
  WHERE task_id = $1 and lease_owner = $2 and lease_version = $3 and status = 'running'
    AND (CASE WHEN p_skip THEN optional ELSE current_step = p_step END)
  FOR UPDATE;
  IF v_job IS NULL THEN
    outcome := 'lost';
    RETURN;
  END IF;
  -- The job's finish lock: the finishers of one job take turns from here to their commit.
  PERFORM pg_advisory_xact_lock(hashtext('switchyard:job'), hashtext(v_job::text));
  -- A fresh snapshot: is any other task of the job unfinished? If not, this is the last one.
  v_last := NOT EXISTS (
    SELECT 1 FROM agent_task_state
    WHERE job_id = v_job AND parent_task_id IS NOT NULL AND task_id <> p_task_id
      AND status <> 'success' AND NOT (optional AND status IN ('skipped', 'failed', 'cancelled')));
  IF v_last AND NOT p_complete_job THEN
    -- Nothing written: every task's outcome, this one's as it will be, for the caller to build
    -- the job's result and call again with it.
    SELECT jsonb_agg(jsonb_build_object('task_id', o.task_id, 'role', o.role,
        'status', CASE WHEN o.task_id = p_task_id THEN (CASE WHEN p_skip THEN 'skipped' ELSE 'success' END) ELSE o.status::text END,
        'output_summary', CASE WHEN o.task_id = p_task_id THEN (CASE WHEN p_skip THEN o.output_summary ELSE p_output END) ELSE o.output_summary END,
        'item_key', o.input_summary ->> 'item_key') ORDER BY o.ordinal, o.created_at)
    INTO outcomes
    FROM agent_task_state o WHERE o.job_id = v_job AND o.parent_task_id IS NOT NULL;
    outcome := 'last';
    RETURN;
  END IF;
  IF p_skip THEN
    UPDATE agent_task_state SET status = 'skipped', error = p_reason, route_targets = route_targets || p_routes,
      updated_at = now(), finished_at = now()
    WHERE task_id = p_task_id;
  ELSE
    UPDATE agent_task_state SET status = 'success', current_step = p_step + 1,
      step_checkpoints = step_checkpoints || p_checkpoints,
      route_targets = route_targets || p_routes,
      cost_usd = cost_usd + p_cost, output_summary = p_output,
      updated_at = now(), finished_at = now(), error = null
    WHERE task_id = p_task_id;
  END IF;
  -- The last task completes its job with the result the caller built from the outcomes above
  -- (they cannot have changed: every other task is finished, and a cancel would have taken
  -- this task's lease). Only a running root moves: a job completes once.
  IF v_last THEN
    UPDATE agent_task_state SET status = 'success', output_summary = p_result, updated_at = now(), finished_at = now()
    WHERE task_id = v_job AND status = 'running';
    GET DIAGNOSTICS v_completed = ROW_COUNT;
  END IF;
  -- The dependents of this task that became ready (this statement sees the update above).
  SELECT coalesce(jsonb_agg(jsonb_build_object('task_id', d.task_id, 'job_id', d.job_id, 'tenant_id', d.tenant_id, 'role', d.role,
      'trace_context', d.trace_context, 'queue_job_id', d.queue_job_id) ORDER BY d.ordinal), '[]'::jsonb)
  INTO ready
  FROM agent_task_state d
  WHERE d.job_id = v_job AND d.status::text = 'pending' AND p_task_id = any(d.depends_on) AND not exists (
    select 1 from agent_task_state dep
    where dep.task_id = any(d.depends_on)
      and dep.status <> 'success' and not (dep.optional and dep.status in ('skipped', 'failed', 'cancelled')));
  outcome := CASE WHEN v_completed = 1 THEN 'completed' ELSE 'finished' END;
END;
$$ LANGUAGE plpgsql VOLATILE;
