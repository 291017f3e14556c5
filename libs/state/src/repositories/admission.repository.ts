import { sql } from 'drizzle-orm';
import type { Pool } from 'pg';
import type { TaskStatus } from '@switchyard/contracts';
import { poolBehind, type Database } from '../database';
import { dependenciesDoneSql, toReadyTask, type RawReadyTask, type ReadyTask } from './task-clauses';

export interface QueuedJobHead {
  jobId: string;
  tenantId: string;
}

/** What an admission decision sees: queued heads oldest first, and running jobs per tenant. */
export interface AdmissionSnapshot {
  queued: QueuedJobHead[];
  running: Record<string, number>;
}

/** A just-admitted job and its tasks that may start now, as its producer needs them. */
export interface AdmittedJob {
  jobId: string;
  ready: ReadyTask[];
}

/*
 * One pass: begin, the advisory lock, the snapshot, the admit, commit. The lock is a statement
 * of its own so that the snapshot (taken when its statement starts) is taken under it and sees
 * every earlier pass's admissions.
 */
const ADMISSION_LOCK_SQL = `/* sy:admissionLock */ select pg_advisory_xact_lock(hashtext('switchyard:admission'))`;

/** Running jobs per tenant (an object) and at most $1 queued heads of each tenant, oldest first (an array). */
const ADMISSION_SNAPSHOT_SQL = `/* sy:admissionSnapshot */
select
  (select coalesce(jsonb_object_agg(tenant_id, running), '{}'::jsonb) from (
    select tenant_id, count(*)::int as running from agent_task_state
    where parent_task_id is null and status in ('pending', 'running', 'paused')
    group by tenant_id) c) as running,
  (select coalesce(jsonb_agg(jsonb_build_object('jobId', job_id, 'tenantId', tenant_id) order by created_at, job_id), '[]'::jsonb) from (
    select task_id as job_id, tenant_id, created_at,
      row_number() over (partition by tenant_id order by created_at, task_id) as n
    from agent_task_state where parent_task_id is null and status = 'queued') q
   where n <= $1::int) as queued`;

/**
 * Flips the jobs $1 (root and tasks) from `queued` to `pending` and returns their tasks that
 * may start now. The dependency check reads the statement's snapshot, where the flipped rows
 * are still `queued` (not done): only tasks without dependencies, or whose dependencies
 * finished before (a retried job), come back.
 */
const ADMIT_SQL = `/* sy:admit */
with admitted as (
  update agent_task_state set status = 'pending', updated_at = now()
  where job_id = any($1::uuid[]) and status = 'queued'
  returning task_id, job_id, tenant_id, role, trace_context, queue_job_id, parent_task_id, depends_on, ordinal, created_at
)
select task_id, job_id, tenant_id, role, trace_context, queue_job_id from admitted a
where a.parent_task_id is not null and ${dependenciesDoneSql('a')}
order by a.ordinal, a.created_at`;

/** Whether any job waits for admission (a probe on the status index, no lock). */
const ANY_QUEUED_SQL = `/* sy:anyQueuedJob */ select exists (select 1 from agent_task_state where status = 'queued' and parent_task_id is null) as queued`;

/**
 * Admission of queued jobs (SPEC §6). A job counts as running from its admission until its
 * root row is terminal: `pending`, `running` or `paused`. Jobs are root rows
 * (`parent_task_id is null`); a queued job's tasks are `queued` too, so no queue entry, sweep
 * or claim can start them before admission.
 */
export class AdmissionRepository {
  private readonly pool: Pool;

  /** `pool` is the one behind `db` (`DatabaseHandle.pool`); when omitted, drizzle's client is used. */
  constructor(
    private readonly db: Database,
    pool?: Pool,
  ) {
    this.pool = poolBehind(db, pool, 'AdmissionRepository');
  }

  /**
   * One admission pass, serialised across every supervisor by a transaction-scoped advisory
   * lock: reads the running counts and at most `headsPerTenant` queued jobs of each tenant,
   * asks `decide` which to admit, and flips those jobs (root and tasks) from `queued` to
   * `pending` in the same transaction. Returns the admitted jobs in admission order, each with
   * the tasks that may start now.
   */
  async admit(headsPerTenant: number, decide: (snapshot: AdmissionSnapshot) => string[]): Promise<AdmittedJob[]> {
    const client = await this.pool.connect();
    try {
      await client.query('begin');
      await client.query({ name: 'sy-admission-lock', text: ADMISSION_LOCK_SQL });
      const snapshot = await client.query<AdmissionSnapshot>({ name: 'sy-admission-snapshot', text: ADMISSION_SNAPSHOT_SQL, values: [headsPerTenant] });
      const { queued, running } = snapshot.rows[0]!;
      const admitted = queued.length === 0 ? [] : decide({ queued, running });
      const jobs = new Map<string, ReadyTask[]>(admitted.map((jobId) => [jobId, []]));
      if (admitted.length > 0) {
        const ready = await client.query<RawReadyTask>({ name: 'sy-admit', text: ADMIT_SQL, values: [admitted] });
        for (const r of ready.rows) {
          jobs.get(r.job_id)?.push(toReadyTask(r));
        }
      }
      await client.query('commit');
      return [...jobs].map(([jobId, ready]) => ({ jobId, ready }));
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** Whether a job waits for admission: a pass when nothing is queued would admit nothing, so callers skip it. */
  async anyQueued(): Promise<boolean> {
    const result = await this.pool.query<{ queued: boolean }>({ name: 'sy-any-queued-job', text: ANY_QUEUED_SQL });
    return result.rows[0]?.queued ?? false;
  }

  /** A job's status (its root row), or null when there is no such job of the tenant. */
  async jobStatus(tenantId: string, jobId: string): Promise<TaskStatus | null> {
    const result = await this.db.execute<{ status: TaskStatus }>(sql`
      select status from agent_task_state where task_id = ${jobId} and tenant_id = ${tenantId} and parent_task_id is null`);
    return result.rows[0]?.status ?? null;
  }

  /** 1-based place of a queued job among its tenant's queued jobs; null when it is not queued. */
  async queuePosition(tenantId: string, jobId: string): Promise<number | null> {
    const result = await this.db.execute<{ position: number | null }>(sql`
      select (select count(*)::int from agent_task_state q
              where q.tenant_id = j.tenant_id and q.parent_task_id is null and q.status = 'queued'
                and (q.created_at, q.task_id) <= (j.created_at, j.task_id)) as position
      from agent_task_state j
      where j.task_id = ${jobId} and j.tenant_id = ${tenantId} and j.parent_task_id is null and j.status = 'queued'`);
    const row = result.rows[0];
    return row?.position == null ? null : Number(row.position);
  }
}
