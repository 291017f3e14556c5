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

/**
 * Running jobs per tenant (an object) and the queued heads of each tenant, oldest first (an
 * array): at most $1 per tenant, and with $2 (the fleet's running limit) no more than the fleet
 * has free slots (migration 0014, from job_admission). Named by where it is read: under the
 * lock, or before it (an optimistic pass's peek).
 */
const snapshotSql = (name: string) => `/* sy:${name} */ select running, queued from switchyard_admission_snapshot($1::int, $2::int)`;

const ADMISSION_SNAPSHOT_SQL = snapshotSql('admissionSnapshot');

/**
 * Flips the jobs $1 (root and tasks) from `queued` to `pending` and returns their tasks that
 * may start now. The dependency check reads the statement's snapshot, where the flipped rows
 * are still `queued` (not done): only tasks without dependencies, or whose dependencies
 * finished before (a retried job), come back.
 */
const ADMIT_SQL = `/* sy:admit */
with admitted as (
  update agent_task_state set status = 'pending', updated_at = now()
  -- By job, whatever the statistics say (migration 0012 says why the status is compared as text).
  where job_id = any($1::uuid[]) and status::text = 'queued'
  returning task_id, job_id, tenant_id, role, trace_context, queue_job_id, parent_task_id, depends_on, ordinal, created_at
)
select task_id, job_id, tenant_id, role, trace_context, queue_job_id from admitted a
where a.parent_task_id is not null and ${dependenciesDoneSql('a')}
order by a.ordinal, a.created_at`;

/** The admission snapshot without the lock: what an optimistic pass decides on. */
const ADMISSION_PEEK_SQL = snapshotSql('admissionPeek');

/**
 * Under the lock, admits those of the jobs $2 still queued if the limits ($3 each chosen tenant's,
 * $4 the fleet's) hold with them on the counts now; without limits, only if every one is still
 * queued and no tenant runs more jobs than in $1, the counts the decision saw (migration 0010,
 * `switchyard_admit`, which says why). Otherwise nothing is written. Returns the jobs admitted.
 */
const ADMIT_IF_UNCHANGED_SQL = `/* sy:admitIfUnchanged */ select admitted, jobs, ready from switchyard_admit($1::jsonb, $2::uuid[], $3::jsonb, $4::int)`;

/** The limits a decision kept: the fleet's running jobs at most, and each tenant's. */
export interface AdmissionLimits {
  global: number;
  of: (tenantId: string) => number;
}

/** Optimistic passes before a pass under the lock (another pass admitted under each). */
const OPTIMISTIC_TRIES = 3;

/** Whether any job waits for admission (a probe of job_admission, no lock). */
const ANY_QUEUED_SQL = `/* sy:anyQueuedJob */ select exists (select 1 from job_admission where queued) as queued`;

/**
 * Admission of queued jobs (SPEC §6). A job counts as running from its admission until its
 * root row is terminal: `pending`, `running` or `paused`. Jobs are root rows
 * (`parent_task_id is null`); a queued job's tasks are `queued` too, so no queue entry, sweep
 * or claim can start them before admission. What a decision reads (the running counts and the
 * queued heads) comes from `job_admission`, which triggers keep equal to the roots' state
 * (migration 0014), so its cost follows the backlog and the running jobs, not the table's history.
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
   * lock: reads the running counts and at most `headsPerTenant` queued jobs of each tenant
   * (with `limits`, no more than the fleet has free slots), asks `decide` which to admit, and
   * flips those jobs (root and tasks) from `queued` to `pending` in the same transaction.
   * Returns the admitted jobs in admission order, each with the tasks that may start now.
   */
  async admit(headsPerTenant: number, decide: (snapshot: AdmissionSnapshot) => string[], limits?: AdmissionLimits): Promise<AdmittedJob[]> {
    // Optimistic, in two statements: read the snapshot without the lock, decide, and admit under
    // the lock what of the choice is still queued, if the limits still hold (else decide again). A pass that finds
    // nothing to admit writes nothing, like a pass under the lock at the moment of its read.
    for (let attempt = 0; attempt < OPTIMISTIC_TRIES; attempt += 1) {
      const snapshot = (await this.pool.query<AdmissionSnapshot>({ name: 'sy-admission-peek', text: ADMISSION_PEEK_SQL, values: [headsPerTenant, limits?.global ?? null] })).rows[0]!;
      const admitted = snapshot.queued.length === 0 ? [] : decide(snapshot);
      if (admitted.length === 0) return [];
      const result = await this.pool.query<{ admitted: boolean; jobs: string[]; ready: RawReadyTask[] | null }>({
        name: 'sy-admit-if-unchanged',
        text: ADMIT_IF_UNCHANGED_SQL,
        values: [JSON.stringify(snapshot.running), admitted, limits ? JSON.stringify(limitsOfChosen(snapshot, admitted, limits)) : null, limits?.global ?? null],
      });
      const row = result.rows[0]!;
      if (row.admitted) return admittedJobs(row.jobs, row.ready ?? []);
    }
    return this.admitUnderLock(headsPerTenant, decide, limits?.global);
  }

  /** The pass under the lock for its whole length: begin, lock, snapshot, admit, commit. */
  private async admitUnderLock(headsPerTenant: number, decide: (snapshot: AdmissionSnapshot) => string[], globalLimit: number | undefined): Promise<AdmittedJob[]> {
    const client = await this.pool.connect();
    try {
      await client.query('begin');
      await client.query({ name: 'sy-admission-lock', text: ADMISSION_LOCK_SQL });
      const snapshot = await client.query<AdmissionSnapshot>({ name: 'sy-admission-snapshot', text: ADMISSION_SNAPSHOT_SQL, values: [headsPerTenant, globalLimit ?? null] });
      const { queued, running } = snapshot.rows[0]!;
      const admitted = queued.length === 0 ? [] : decide({ queued, running });
      const ready = admitted.length > 0 ? (await client.query<RawReadyTask>({ name: 'sy-admit', text: ADMIT_SQL, values: [admitted] })).rows : [];
      await client.query('commit');
      return admittedJobs(admitted, ready);
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
      select (select count(*)::int from job_admission q
              where q.tenant_id = j.tenant_id and q.queued and (q.created_at, q.job_id) <= (j.created_at, j.job_id)) as position
      from job_admission j
      where j.job_id = ${jobId} and j.tenant_id = ${tenantId} and j.queued`);
    const row = result.rows[0];
    return row?.position == null ? null : Number(row.position);
  }
}

/** The admitted jobs in admission order, each with its ready tasks. */
function admittedJobs(admitted: readonly string[], ready: readonly RawReadyTask[]): AdmittedJob[] {
  const jobs = new Map<string, ReadyTask[]>(admitted.map((jobId) => [jobId, []]));
  for (const r of ready) jobs.get(r.job_id)?.push(toReadyTask(r));
  return [...jobs].map(([jobId, tasks]) => ({ jobId, ready: tasks }));
}

/** The running limit of each chosen job's tenant, as `switchyard_admit` takes them. */
function limitsOfChosen(snapshot: AdmissionSnapshot, admitted: readonly string[], limits: AdmissionLimits): Record<string, number> {
  const chosen = new Set(admitted);
  const byTenant: Record<string, number> = {};
  for (const job of snapshot.queued) if (chosen.has(job.jobId)) byTenant[job.tenantId] = limits.of(job.tenantId);
  return byTenant;
}
