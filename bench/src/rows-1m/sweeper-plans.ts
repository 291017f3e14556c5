import type { Pool, PoolClient } from 'pg';
import { JobStatsRepository, TaskRecoveryRepository, connectDatabase } from '@switchyard/state';

/** A statement as a repository sent it: its SQL text and parameters. */
interface SentStatement {
  text: string;
  values: unknown[];
}

export interface StatementPlan {
  name: string;
  /** The plan as `EXPLAIN (ANALYZE, BUFFERS)` prints it. */
  text: string;
  /** The top node's estimated total cost, actual time (ms) and shared buffers touched. */
  totalCost: number;
  actualMs: number;
  buffers: number;
  /** Every scan node of the plan, e.g. `Index Scan using agent_task_state_running_heartbeat_idx`. */
  scans: string[];
}

/** Records every statement sent through the pool's clients (drizzle passes the values apart or in the config). */
function recordStatements(pool: Pool): SentStatement[] {
  const sent: SentStatement[] = [];
  pool.on('connect', (client: PoolClient) => {
    const original = client.query as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const [first, second] = args;
      const config = typeof first === 'string' ? { text: first } : (first as { text: string; values?: unknown[] });
      sent.push({ text: config.text, values: Array.isArray(second) ? second : (config.values ?? []) });
      return original.apply(client, args);
    }) as PoolClient['query'];
  });
  return sent;
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Total Cost': number;
  'Actual Total Time': number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
}

function scansOf(node: PlanNode): string[] {
  const own = /Scan/.test(node['Node Type']) ? [`${node['Node Type']}${node['Index Name'] ? ` using ${node['Index Name']}` : node['Relation Name'] ? ` on ${node['Relation Name']}` : ''}`] : [];
  return [...own, ...(node.Plans ?? []).flatMap(scansOf)];
}

async function explain(pool: Pool, name: string, statement: SentStatement): Promise<StatementPlan> {
  const json = await pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>(`explain (analyze, buffers, format json) ${statement.text}`, statement.values);
  const text = await pool.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${statement.text}`, statement.values);
  const [{ Plan: plan, 'Execution Time': executionMs }] = json.rows[0]!['QUERY PLAN'];
  return {
    name,
    text: text.rows.map((r) => r['QUERY PLAN']).join('\n'),
    totalCost: plan['Total Cost'],
    actualMs: executionMs,
    buffers: plan['Shared Hit Blocks'] + plan['Shared Read Blocks'],
    scans: scansOf(plan),
  };
}

/**
 * The sweeper's own statements, as `TaskRecoveryRepository` sends them with the supervisor's
 * defaults (SWEEP_BATCH 100, RECONCILE_BATCH 200, STALE_AFTER_MS 8 s): the stale-task claim
 * (`select … for update skip locked`; the decision skips every task, so nothing is taken
 * over), the reconcile pass's first and second page of pending tasks, and the stale-task
 * gauge. Each is then run again under `EXPLAIN (ANALYZE, BUFFERS)` with the same parameters.
 */
export async function sweeperPlans(databaseUrl: string): Promise<StatementPlan[]> {
  const handle = connectDatabase(databaseUrl, { max: 1, application_name: 'sy-bench-sweeper-plans' });
  try {
    const sent = recordStatements(handle.pool);
    const recovery = new TaskRecoveryRepository(handle.db);
    const captured = async (name: string, run: () => Promise<unknown>, pick: (s: SentStatement) => boolean): Promise<[string, SentStatement]> => {
      sent.length = 0;
      await run();
      const statement = sent.find(pick);
      if (!statement) throw new Error(`${name}: no statement recorded`);
      return [name, statement];
    };
    const firstPage = await recovery.pendingPage(200);
    const last = firstPage.tasks.at(-1);
    const statements = [
      await captured(
        'sweepStale: claim stale running tasks',
        () => recovery.sweepStale({ sweeperId: 'bench', staleAfterMs: 8_000, limit: 100, decide: () => ({ action: 'skip' }) }),
        (s) => /for update skip locked/i.test(s.text),
      ),
      await captured('pendingPage: reconcile, first page', () => recovery.pendingPage(200), (s) => /status = 'pending'/.test(s.text)),
      ...(last
        ? [await captured('pendingPage: reconcile, next page', () => recovery.pendingPage(200, { updatedAt: last.updatedAt, taskId: last.taskId }), (s) => /status = 'pending'/.test(s.text))]
        : []),
      await captured('countStaleTasks: stale-task gauge', () => new JobStatsRepository(handle.db).countStaleTasks(8_000), (s) => /count\(\*\)/.test(s.text)),
    ];
    const plans: StatementPlan[] = [];
    for (const [name, statement] of statements) plans.push(await explain(handle.pool, name, statement));
    return plans;
  } finally {
    await handle.close();
  }
}
