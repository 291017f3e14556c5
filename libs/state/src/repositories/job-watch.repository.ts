import { sql } from 'drizzle-orm';
import type { Database } from '../database';

/**
 * Who watches which job (table `job_watch`, migration 0011): the task table's trigger sends a
 * job's per-task notification only while a live row names it. Rows are hints kept alive by
 * their watcher's renewals; one whose watcher died expires and is deleted by the next renewal
 * of any watcher.
 */
export class JobWatchRepository {
  constructor(private readonly db: Database) {}

  /** Marks `jobIds` watched by `watcher` for `ttlMs` from now, and deletes every expired row: one statement. */
  async renew(watcher: string, jobIds: readonly string[], ttlMs: number): Promise<void> {
    // The delete leaves this watcher's rows being renewed alone: one statement may not both delete and update a row.
    await this.db.execute(sql`
      with renewed as (select value::uuid as job_id from jsonb_array_elements_text(${JSON.stringify(jobIds)}::jsonb)),
      expired as (
        delete from job_watch w where w.expires_at < now()
          and not (w.watcher = ${watcher} and w.job_id in (select job_id from renewed)))
      insert into job_watch (job_id, watcher, expires_at)
      select job_id, ${watcher}, now() + make_interval(secs => ${ttlMs / 1000}) from renewed
      on conflict (job_id, watcher) do update set expires_at = excluded.expires_at`);
  }

  async release(watcher: string, jobId: string): Promise<void> {
    await this.db.execute(sql`delete from job_watch where job_id = ${jobId} and watcher = ${watcher}`);
  }
}
