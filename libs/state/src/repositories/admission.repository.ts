import { sql } from 'drizzle-orm';
import type { TaskStatus, TraceCarrier } from '@switchyard/contracts';
import type { Database } from '../database';
import { dependenciesDone } from './task.repository';

export interface QueuedJobHead {
  jobId: string;
  tenantId: string;
}

/** What an admission decision sees: queued heads oldest first, and running jobs per tenant. */
export interface AdmissionSnapshot {
  queued: QueuedJobHead[];
  running: Record<string, number>;
}

/** A task of a just-admitted job, as a queue producer needs it. */
export interface AdmittedTask {
  taskId: string;
  jobId: string;
  tenantId: string;
  role: string;
  traceContext: TraceCarrier | null;
  /** Set for a retried task: its earlier queue job still exists under the task id. */
  queueJobId: string | null;
}

/** One advisory lock key for every supervisor's admission pass. */
const ADMISSION_LOCK = sql`select pg_advisory_xact_lock(hashtext('switchyard:admission'))`;

/**
 * Admission of queued jobs (SPEC §6). A job counts as running from its admission until its
 * root row is terminal: `pending`, `running` or `paused`. Jobs are root rows
 * (`parent_task_id is null`); a queued job's tasks are `queued` too, so no queue entry, sweep
 * or claim can start them before admission.
 */
export class AdmissionRepository {
  constructor(private readonly db: Database) {}

  /**
   * One admission pass, serialised across every supervisor by a transaction-scoped advisory
   * lock: reads the running counts and at most `headsPerTenant` queued jobs of each tenant,
   * asks `decide` which to admit, and flips those jobs (root and tasks) from `queued` to
   * `pending` in the same transaction. Returns the admitted job ids in admission order.
   */
  async admit(headsPerTenant: number, decide: (snapshot: AdmissionSnapshot) => string[]): Promise<string[]> {
    return this.db.transaction(async (tx) => {
      await tx.execute(ADMISSION_LOCK);
      const counts = await tx.execute<{ tenant_id: string; running: number }>(sql`
        select tenant_id, count(*)::int as running from agent_task_state
        where parent_task_id is null and status in ('pending', 'running', 'paused')
        group by tenant_id`);
      const heads = await tx.execute<{ job_id: string; tenant_id: string }>(sql`
        select job_id, tenant_id from (
          select task_id as job_id, tenant_id, created_at,
            row_number() over (partition by tenant_id order by created_at, task_id) as n
          from agent_task_state where parent_task_id is null and status = 'queued') q
        where n <= ${headsPerTenant}
        order by created_at, job_id`);
      if (heads.rows.length === 0) return [];
      const admitted = decide({
        queued: heads.rows.map((r) => ({ jobId: r.job_id, tenantId: r.tenant_id })),
        running: Object.fromEntries(counts.rows.map((r) => [r.tenant_id, Number(r.running)])),
      });
      if (admitted.length === 0) return [];
      await tx.execute(sql`
        update agent_task_state set status = 'pending', updated_at = now()
        where job_id = any(string_to_array(${admitted.join(',')}, ',')::uuid[]) and status = 'queued'`);
      return admitted;
    });
  }

  /** The pending tasks of an admitted job, for its producer to enqueue. */
  async readyTasksOf(jobId: string): Promise<AdmittedTask[]> {
    const result = await this.db.execute<{ task_id: string; job_id: string; tenant_id: string; role: string; trace_context: TraceCarrier | null; queue_job_id: string | null }>(sql`
      select task_id, job_id, tenant_id, role, trace_context, queue_job_id from agent_task_state t
      where job_id = ${jobId} and parent_task_id is not null and status = 'pending' and ${dependenciesDone('t')}
      order by ordinal, created_at`);
    return result.rows.map((r) => ({ taskId: r.task_id, jobId: r.job_id, tenantId: r.tenant_id, role: r.role, traceContext: r.trace_context, queueJobId: r.queue_job_id }));
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
