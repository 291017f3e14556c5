import type { Client } from 'pg';

/**
 * Set-based generation of jobs (root rows) and their tasks in `agent_task_state`, as the
 * planner writes them: root `job_id = task_id` with `parent_task_id` null, tasks pointing at
 * it, the last task of each job a fan-in over the others. Job `j` has 1 + 2·((7j) mod 10)
 * tasks (1 to 19, ten on average), so jobs 1..N hold exactly 10·N tasks.
 *
 * Job 1 is the newest; job j was created about j × 78 s ago (100,000 jobs span 90 days), so
 * generating more jobs adds older history, as a table grows in production. The newest
 * ACTIVE_JOBS jobs are still active (queued, pending or running) whatever the table's size: the
 * live set follows the fleet, not the history. Older jobs finished (success, 4 % failed,
 * 1.5 % cancelled). A running job has up to four running tasks, 85 % of them with a heartbeat
 * minutes to hours old: the stale tasks a dead worker fleet leaves behind. About 2 % of the
 * tasks were resumed once (retry_count 1). Tenants are skewed (tenant-00 holds about 30 % of
 * the jobs, tenant-39 under 1 %), with four job types. Every attribute is a hash of the job
 * number, so runs repeat.
 */
export const TASKS_PER_JOB_AVERAGE = 10;
export const ACTIVE_JOBS = 1_500;

const CREATE_HELPERS = `
create or replace function pg_temp.unit(salt text, n bigint) returns float8 language sql immutable as
  $$ select ('x' || substr(md5(salt || n::text), 1, 8))::bit(32)::bigint / 4294967296.0 $$;
-- A version-4 UUID from a hash of the key (the API's cursors accept RFC 9562 UUIDs only).
create or replace function pg_temp.uuid_of(key text) returns uuid language sql immutable as
  $$ select (substr(h, 1, 12) || '4' || substr(h, 14, 3) || '8' || substr(h, 18))::uuid from md5(key) h $$;
create unlogged table if not exists bench_jobs (
  j int primary key, job_id uuid not null, tenant_id text not null, job_type text not null,
  created_at timestamptz not null, status task_status not null, size int not null)`;

const INSERT_JOBS = `
insert into bench_jobs
select j, pg_temp.uuid_of('job-' || j),
  'tenant-' || lpad(floor(40 * power(pg_temp.unit('tenant', j), 3))::int::text, 2, '0'),
  case when kind < 0.6 then 'doc_review' when kind < 0.8 then 'research_report' when kind < 0.95 then 'incident_review' else 'goal' end,
  now() - (j + jitter) * interval '77.76 seconds',
  (case when j <= ${ACTIVE_JOBS} then (case when s < 0.2 then 'queued' when s < 0.3 then 'pending' else 'running' end)
        else (case when s < 0.04 then 'failed' when s < 0.055 then 'cancelled' else 'success' end) end)::task_status,
  1 + 2 * ((j * 7) % 10)
from generate_series($1::int, $2::int) j,
  lateral (select pg_temp.unit('type', j) as kind, pg_temp.unit('age', j) as jitter, pg_temp.unit('status', j) as s) r`;

const TRACE = `jsonb_build_object('traceparent', '00-' || md5('trace' || j) || '-' || substr(md5('span' || j), 1, 16) || '-01')`;

const INSERT_ROOTS = `
insert into agent_task_state (task_id, parent_task_id, job_id, tenant_id, job_type, agent_id, role, status, input_summary, output_summary,
  total_steps, current_step, workflow_hash, workflow_definition, trace_context, error, created_at, updated_at, started_at, finished_at)
select job_id, null, job_id, tenant_id, job_type, 'supervisor', 'job', status,
  jsonb_build_object('input', jsonb_build_object(
      'question', 'What changed in the ' || job_type || ' of batch ' || j || ' and why does it matter for the quarterly review?',
      'documents', (select jsonb_agg(jsonb_build_object('id', 'doc-' || k, 'text', repeat('Lorem ipsum dolor sit amet ' || k || '. ', 4))) from generate_series(1, size) k)),
    'meta', '{}'::jsonb),
  case when status = 'success' then jsonb_build_object('answer', repeat('The documents agree on the main finding. ', 6), 'confidence', 0.8, 'evidence', jsonb_build_array('doc-1', 'doc-2')) end,
  size, case when status = 'success' then size else 0 end,
  md5(job_type), jsonb_build_object('type', job_type, 'agents', jsonb_build_array(jsonb_build_object('role', 'extract', 'prompt', repeat('You are an extraction agent. ', 20)))),
  ${TRACE},
  case when status = 'failed' then 'task extract-1 failed: upstream error after 5 attempts' end,
  created_at,
  created_at + case when status in ('queued', 'pending', 'running') then interval '1 second' else interval '40 seconds' end,
  case when status <> 'queued' then created_at + interval '1 second' end,
  case when status in ('success', 'failed', 'cancelled') then created_at + interval '40 seconds' end
from bench_jobs where j between $1 and $2`;

/** Task k of job j: the last one (k = size) is the fan-in `synthesize` over the others. */
const INSERT_TASKS = `
insert into agent_task_state (task_id, parent_task_id, job_id, tenant_id, job_type, agent_id, role, status, ordinal, depends_on, input_summary,
  output_summary, step_checkpoints, total_steps, current_step, retry_count, route_targets, cost_usd, lease_owner, lease_version, trace_context,
  error, created_at, updated_at, started_at, finished_at)
select pg_temp.uuid_of('task-' || j || '.' || k), job_id, job_id, tenant_id, job_type,
  case when fan_in then 'synthesize' else 'extract-' || k end, case when fan_in then 'synthesize' else 'extract' end,
  ts, k - 1,
  case when fan_in and size > 1 then array(select pg_temp.uuid_of('task-' || j || '.' || d) from generate_series(1, size - 1) d) else '{}'::uuid[] end,
  case when fan_in then '{}'::jsonb
       else jsonb_build_object('item', jsonb_build_object('id', 'doc-' || k, 'text', repeat('Lorem ipsum dolor sit amet ' || k || '. ', 8)), 'item_index', k - 1, 'item_key', 'doc-' || k) end,
  case when ts = 'success' then jsonb_build_object('summary', repeat('The document states the main finding with a caveat. ', 4), 'key_points', jsonb_build_array('first point', 'second point'), 'confidence', 0.7) end,
  case when ts in ('success', 'running')
       then jsonb_build_array(jsonb_build_object('step', 1, 'name', 'prepare', 'summary', jsonb_build_object('passages', 3), 'completed_at', created_at + interval '2 seconds'))
       else '[]'::jsonb end,
  2, case ts when 'success' then 2 when 'running' then 1 else 0 end, resumed::int,
  case when ts in ('success', 'failed')
       then jsonb_build_array(jsonb_build_object('step', 2, 'target', 'local_vllm_7b', 'model', 'qwen2.5-7b-instruct', 'rule', 'low_complexity_local',
              'outcome', case when ts = 'success' then 'ok' else 'error' end, 'latency_ms', 840))
       else '[]'::jsonb end,
  case when ts = 'success' then 0.0004 else 0 end,
  case when ts in ('running', 'success', 'failed') then 'worker-' || (j % 8) end,
  case when ts in ('queued', 'pending') then resumed::int else 1 + resumed::int end,
  ${TRACE},
  case when ts = 'failed' then 'upstream error after 5 attempts' when resumed then 'resumed: no heartbeat from worker-3' end,
  created_at,
  case when ts = 'running' then (case when pg_temp.unit('heartbeat', j * 32 + k) < 0.85
                                      then now() - interval '1 minute' - pg_temp.unit('heartbeat-age', j * 32 + k) * greatest(now() - created_at - interval '1 minute', interval '0')
                                      else now() end)
       when ts in ('queued', 'pending') then created_at + interval '1 second'
       else created_at + interval '30 seconds' end,
  case when ts not in ('queued', 'pending') then created_at + interval '2 seconds' end,
  case when ts in ('success', 'failed', 'cancelled') then created_at + interval '30 seconds' end
from bench_jobs, generate_series(1, size) k,
  lateral (select k = size as fan_in, status <> 'queued' and pg_temp.unit('resumed', j * 32 + k) < 0.02 as resumed) f,
  lateral (select (case status
     when 'success' then 'success'
     when 'queued' then 'queued'
     when 'pending' then 'pending'
     when 'failed' then (case when k = 1 then 'failed' when k % 3 = 0 then 'success' else 'cancelled' end)
     when 'cancelled' then (case when k * 2 <= size then 'success' else 'cancelled' end)
     else (case when k * 2 <= size then 'success' when k * 2 <= size + 8 and not (fan_in and size > 1) then 'running' else 'pending' end)
   end)::task_status as ts) s
where j between $1 and $2`;

/** Jobs `first..last` (1-based job numbers) with their tasks, in batches; `client` keeps the session's helpers. */
export async function generateJobs(client: Client, first: number, last: number, onBatch: (jobsDone: number) => void, batchJobs = 20_000): Promise<void> {
  await client.query(CREATE_HELPERS);
  for (let from = first; from <= last; from += batchJobs) {
    const to = Math.min(last, from + batchJobs - 1);
    await client.query('begin');
    await client.query(INSERT_JOBS, [from, to]);
    await client.query(INSERT_ROOTS, [from, to]);
    await client.query(INSERT_TASKS, [from, to]);
    await client.query('commit');
    onBatch(to - first + 1);
  }
  // Fresh statistics and a visibility map, as autovacuum would leave a table of this age.
  await client.query('vacuum (analyze) agent_task_state');
}

export async function dropGeneratorTable(client: Client): Promise<void> {
  await client.query('drop table if exists bench_jobs');
}
