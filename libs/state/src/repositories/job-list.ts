import { sql, type SQL } from 'drizzle-orm';
import { agentTaskState as t } from '../schema';

/** Where the previous page of a job list ended: its last root row. */
export interface JobListCursor {
  createdAt: Date;
  taskId: string;
}

/** The order of every job list, newest first, as the root-row indexes hold it (agent_task_state_*jobs_idx). */
export const jobListOrder: SQL[] = [sql`${t.createdAt} desc nulls last`, sql`${t.taskId} desc nulls last`];

/**
 * The jobs after `cursor` in `jobListOrder`. One row comparison, which the index scan takes as
 * its start: spelled as `created_at < c or (created_at = c and task_id < id)` it is a filter,
 * and page n reads every row of the pages before it.
 */
export function afterJobListCursor(cursor: JobListCursor): SQL {
  return sql`(${t.createdAt}, ${t.taskId}) < (${cursor.createdAt.toISOString()}::timestamptz, ${cursor.taskId}::uuid)`;
}
