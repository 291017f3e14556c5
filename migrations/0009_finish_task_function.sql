-- Finishing a task that is not its job's last, in one round trip (docs/BENCHMARKS.md, bench 1,
-- session 5): the finishing worker used to send begin, the fenced update with a lock of the
-- job's root row, a read of the ready dependents and of the unfinished count, and commit.
-- This function does the same in one statement. When the task is its job's last unfinished
-- one, it declines (outcome 'last', nothing written) and returns every task's outcome: the
-- caller builds the job's result (only the worker can) and calls again with p_complete_job,
-- which writes the task and completes the job in one statement, after checking again, under the
-- same locks, that the task is still the last.
--
-- Why it is race-free: every finisher (this function and the full transaction alike) locks
-- the task's row, then takes the job's finish lock (a transaction-scoped advisory lock keyed
-- by the job, held to commit: the function runs in the caller's implicit transaction; an
-- advisory lock, not a FOR UPDATE of the root row, which would write the row's lock to the
-- heap and the WAL on every finish). In a VOLATILE plpgsql function under READ COMMITTED,
-- each statement takes a fresh snapshot, so the reads after the lock see every finish that
-- committed before it. Of two tasks finishing at once, the second to get the lock sees the
-- first as finished: they never both miss each other. So the last finisher is always told
-- 'last' (and completes the job, once: only a running root moves to success), and a
-- dependent is returned as ready by exactly one finisher, the one after whose write all its
-- dependencies are done (a lost enqueue is recovered by the sweeper's reconcile, as before).
--
-- The lease fence ($1 task, $2 owner, $3 version) and the fan-in clause are the text of
-- FENCE and dependenciesDoneSql('d') in libs/state/src/repositories/task-clauses.ts, verbatim;
-- a unit test (finish-task-function.spec.ts) keeps them equal.
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
  WHERE d.job_id = v_job AND d.status = 'pending' AND p_task_id = any(d.depends_on) AND not exists (
    select 1 from agent_task_state dep
    where dep.task_id = any(d.depends_on)
      and dep.status <> 'success' and not (dep.optional and dep.status in ('skipped', 'failed', 'cancelled')));
  outcome := CASE WHEN v_completed = 1 THEN 'completed' ELSE 'finished' END;
END;
$$ LANGUAGE plpgsql VOLATILE;
--> statement-breakpoint
-- `doc` without the value at each path of `paths` (a JSON array of paths, each an array of
-- keys): what `#-` does once per path. A batch of checkpoints that read the job's input
-- (TaskLeaseRepository, group-committed) leaves out each task's own paths with it.
CREATE OR REPLACE FUNCTION switchyard_jsonb_without(doc jsonb, paths jsonb) RETURNS jsonb AS $$
DECLARE
  p jsonb;
BEGIN
  IF doc IS NULL OR paths IS NULL OR jsonb_typeof(paths) <> 'array' THEN
    RETURN doc;
  END IF;
  FOR p IN SELECT value FROM jsonb_array_elements(paths) LOOP
    doc := doc #- ARRAY(SELECT jsonb_array_elements_text(p));
  END LOOP;
  RETURN doc;
END;
$$ LANGUAGE plpgsql IMMUTABLE;
