import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { EnvSchema } from '@switchyard/config';
import type { RouteRecord } from '@switchyard/contracts';
import { parseWorkflowSubmission, planWorkflowJob, type JobPlan } from '@switchyard/orchestration';
import { loadWorkflowsDir } from '@switchyard/workflows';
import { JobRepository, TaskLeaseRepository, connectDatabase, type DatabasePoolMode, type Lease, type StepCheckpoint } from '@switchyard/state';
import { cpuSnapshot, cpuSpent } from '../support/cpu';
import { fixed, table } from '../support/report';
import { connectRedis } from '../support/resources';
import { forEachLimit, secondsSince } from './flow-helpers';

/**
 * Profiling aid (BENCH_PROFILE=1): what each JobRepository / TaskLeaseRepository call of the hot path costs, in
 * Node CPU and Postgres CPU per call, next to a bare round trip and a plain one-row update,
 * and the claim statement as a named prepared statement (what plan caching would save).
 */

export interface Cost {
  name: string;
  calls: number;
  perSecond: number;
  nodeUs: number;
  postgresUs: number;
}

const CONCURRENCY = 16;

/** The tenant of the jobs it writes (and deletes when done). */
const TENANT = 'bench-profile';

/** `poolMode: 'transaction'` sends the repository's statements unnamed, as behind PgBouncer (DATABASE_POOL_MODE). */
export async function measureStatementCosts(dbUrl: string, jobs = 400, poolMode: DatabasePoolMode = 'session'): Promise<Cost[]> {
  const database = new URL(dbUrl).pathname.slice(1);
  const handle = connectDatabase(dbUrl, { max: CONCURRENCY, application_name: 'sy-bench-profile', poolMode });
  const redis = connectRedis('sy-bench-profile');
  const jobRepository = new JobRepository(handle.db, handle.pool);
  const repo = new TaskLeaseRepository(handle.db, handle.pool);
  let claimSql = '';
  let claimValues: unknown[] = [];
  handle.pool.on('connect', (client: PoolClient) => {
    const original = client.query as (...args: unknown[]) => unknown;
    const capture = (...args: unknown[]): unknown => {
      if (!claimSql) {
        const first = args[0] as string | { text?: string; values?: unknown[] };
        const text = typeof first === 'string' ? first : (first.text ?? '');
        if (text.includes('with claimed')) {
          claimSql = text;
          // drizzle sends (config, params); plain pg callers may put values in the config.
          claimValues = (args[1] as unknown[] | undefined) ?? (typeof first === 'string' ? undefined : first.values) ?? [];
        }
      }
      return original.apply(client, args);
    };
    client.query = capture as PoolClient['query'];
  });
  const costs: Cost[] = [];
  const measure = async (name: string, calls: number, fn: (i: number) => Promise<unknown>) => {
    const before = await cpuSnapshot(redis, { pool: handle.pool, database });
    const start = process.hrtime.bigint();
    await forEachLimit(calls, CONCURRENCY, async (i) => {
      await fn(i);
    });
    const seconds = secondsSince(start);
    const spent = cpuSpent(before, await cpuSnapshot(redis, { pool: handle.pool, database }));
    costs.push({ name, calls, perSecond: calls / seconds, nodeUs: (spent.node * 1e6) / calls, postgresUs: (spent.postgres * 1e6) / calls });
  };
  try {
    const docReview = parseWorkflowSubmission(
      {
        type: 'doc_review',
        input: { question: 'What is the warranty period?', documents: [1, 2, 3, 4, 5].map((d) => ({ id: `d${d}`, text: `Document ${d}. The warranty period is 12 months.` })) },
      },
      loadWorkflowsDir(EnvSchema.parse({}).WORKFLOWS_DIR).workflows,
    );
    const plan = (): JobPlan =>
      planWorkflowJob(
        docReview.workflow,
        docReview.submission,
        { tenantId: TENANT, newId: randomUUID, trace: {} },
      );
    const warm = Array.from({ length: 50 }, plan);
    for (const p of warm) await jobRepository.createJob(p.root, p.tasks);
    const plans = Array.from({ length: jobs }, plan);
    await measure('createJob (one job + 6 tasks)', jobs, (i) => jobRepository.createJob(plans[i]!.root, plans[i]!.tasks));

    const extracts = plans.flatMap((p) => p.tasks.filter((t) => t.role === 'extract').map((t) => t.taskId));
    const half = Math.floor(extracts.length / 2);
    const leases: Lease[] = [];
    await measure('claimTask', half, async (i) => {
      const claim = await repo.claimTask(extracts[i]!, 'bench-profile');
      if (!claim.claimed) throw new Error(`claim of ${extracts[i]} refused: ${claim.reason}`);
      leases[i] = claim.lease;
    });
    const prepare: StepCheckpoint = {
      step: 0,
      name: 'prepare',
      summary: { document_id: 'd1', passages: ['Document 1. The warranty period is 12 months.'], total_chars: 46, kept_chars: 46, truncated: false },
      completed_at: new Date().toISOString(),
    };
    await measure('checkpoint', half, (i) => repo.checkpoint(leases[i]!, prepare, [], 0));
    const extract: StepCheckpoint = { step: 1, name: 'extract', summary: { raw: '{"conclusion":"12 months","evidence":["e"],"confidence":0.9}' }, completed_at: new Date().toISOString() };
    const routes: RouteRecord[] = [{ step: 1, target: 'bench', model: 'bench', rule: 'bench', outcome: 'ok', latency_ms: 0 }];
    const output = { conclusion: '12 months', evidence: ['e'], confidence: 0.9, document_id: 'd1' };
    await measure('completeTask', half, (i) => repo.completeTask(leases[i]!, extract, output, routes, 0));
    await measure('findTaskOutcomes (5 rows)', jobs, (i) => repo.findTaskOutcomes(plans[i]!.jobId, ['extract']));

    // The claim's exact SQL (captured above), sent as an unnamed statement and as a named, plan-cached one.
    if (claimSql) {
      const rest = extracts.slice(half);
      const quarter = Math.floor(rest.length / 2);
      const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i;
      const values = (taskId: string) => claimValues.map((v) => (typeof v === 'string' && UUID.test(v) ? taskId : v));
      await measure('  the same claim SQL, unnamed', quarter, (i) => handle.pool.query({ text: claimSql, values: values(rest[i]!) }));
      await measure('  the same claim SQL, named (prepared once per connection)', quarter, (i) =>
        handle.pool.query({ name: 'bench-claim', text: claimSql, values: values(rest[quarter + i]!) }),
      );
    }
    await measure('baseline: select 1', jobs * 5, () => handle.pool.query('select 1'));
    await measure('baseline: one-row update (unindexed column)', half, (i) =>
      handle.pool.query('update agent_task_state set retry_count = retry_count + 1 where task_id = $1', [extracts[i]]),
    );
    await measure('baseline: one-row update of updated_at', half, (i) =>
      handle.pool.query('update agent_task_state set updated_at = now() where task_id = $1', [extracts[i]]),
    );
    return costs;
  } finally {
    // Its jobs are left running (claimed, never finished): they would hold the fleet's running
    // slots, and admission would queue every job of the profile rounds after it for ever.
    await handle.pool.query(`/* bench */ delete from agent_task_state where tenant_id = $1`, [TENANT]).catch(() => undefined);
    redis.disconnect();
    await handle.close();
  }
}

export function printStatementCosts(costs: Cost[]): void {
  console.log(
    '\nCost of each hot-path statement (the repositories against the bench database, 16 in flight; CPU per call):\n' +
      table(
        ['call', 'calls', 'calls/s', 'node CPU µs', 'postgres CPU µs'],
        costs.map((c) => [c.name, fixed(c.calls), fixed(c.perSecond), fixed(c.nodeUs), fixed(c.postgresUs)]),
      ),
  );
}
