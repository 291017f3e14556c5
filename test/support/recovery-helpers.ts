import type { SimCall, TestStack } from './stack';
import { waitFor } from './processes';

/** Liveness settings small enough for a test to see a takeover in seconds. */
export const FAST_LIVENESS = { HEARTBEAT_MS: '300', STALE_AFTER_MS: '1500', SWEEP_INTERVAL_MS: '300' };

export interface TaskRowJson {
  task_id: string;
  job_id: string;
  role: string;
  status: string;
  current_step: number;
  retry_count: number;
  lease_owner: string | null;
  lease_version: number;
  step_checkpoints: { step: number; name: string; completed_at: string }[];
  finished_at: Date | null;
  error: string | null;
}

export async function taskRows(stack: TestStack, jobIds: string[]): Promise<TaskRowJson[]> {
  const result = await stack.db.pool.query<TaskRowJson>(
    `select task_id, job_id, role, status, current_step, retry_count, lease_owner, lease_version, step_checkpoints, finished_at, error
       from agent_task_state where job_id = any($1::uuid[]) and parent_task_id is not null order by job_id, ordinal`,
    [jobIds],
  );
  return result.rows;
}

export async function jobStatuses(stack: TestStack, jobIds: string[]): Promise<Map<string, { status: string; error: string | null }>> {
  const result = await stack.db.pool.query<{ task_id: string; status: string; error: string | null }>(
    'select task_id, status, error from agent_task_state where task_id = any($1::uuid[])',
    [jobIds],
  );
  return new Map(result.rows.map((r) => [r.task_id, { status: r.status, error: r.error }]));
}

export function documents(prefix: string, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}-${i + 1}`,
    text: `Document ${i + 1} of ${prefix}. Payment is due within ${30 + i} days of delivery.\n\nLate payments accrue interest.`,
  }));
}

export async function submitJobs(stack: TestStack, count: number, docsPerJob: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const res = await stack.request<{ job_id: string }>('POST', '/v1/jobs', {
      type: 'doc_review',
      input: { question: 'When is payment due?', documents: documents(`job${i + 1}`, docsPerJob) },
    });
    if (res.status !== 202) throw new Error(`submit failed: ${res.status} ${JSON.stringify(res.json)}`);
    ids.push(res.json.job_id);
  }
  return ids;
}

/** Waits until every job is finished (Postgres says so), and returns their statuses. */
export async function waitForJobs(stack: TestStack, jobIds: string[], timeoutMs = 90_000): Promise<Map<string, { status: string; error: string | null }>> {
  try {
    return await waitFor(
      `${jobIds.length} jobs to finish`,
      async () => {
        const statuses = await jobStatuses(stack, jobIds);
        return [...statuses.values()].every((s) => ['success', 'failed', 'cancelled'].includes(s.status)) && statuses.size === jobIds.length ? statuses : undefined;
      },
      timeoutMs,
      200,
    );
  } catch (error) {
    throw new Error(`${String(error)}\n${await describeStuckJobs(stack, jobIds)}`, { cause: error });
  }
}

/** What a timed-out wait leaves to go on: every unfinished task row, and the last lines of each process. */
async function describeStuckJobs(stack: TestStack, jobIds: string[]): Promise<string> {
  const rows = await taskRows(stack, jobIds).catch((error: unknown) => `(task rows unreadable: ${String(error)})`);
  const unfinished =
    typeof rows === 'string'
      ? rows
      : rows
          .filter((r) => !['success', 'failed', 'cancelled', 'skipped'].includes(r.status))
          .map((r) => `${r.role} ${r.task_id} ${r.status} step=${r.current_step} retries=${r.retry_count} owner=${r.lease_owner ?? '-'} v${r.lease_version}`)
          .join('\n');
  const processes = [stack.supervisor, ...stack.workers].map((p) => `--- ${p.name} (${p.running ? 'running' : 'exited'}):\n${p.tail(40)}`).join('\n');
  return `unfinished tasks:\n${unfinished || '(none)'}\n${processes}`;
}

/** JSON log lines of a process whose `msg` is `msg`. */
export function logEvents(lines: string[], msg: string): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    try {
      const event = JSON.parse(line) as Record<string, unknown>;
      if (event.msg === msg) events.push(event);
    } catch {
      // not a log line
    }
  }
  return events;
}

export function callsOfTask(calls: SimCall[], taskId: string): SimCall[] {
  return calls.filter((c) => c.headers['x-switchyard-task'] === taskId);
}
