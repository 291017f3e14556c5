import { createBenchDatabase, Cleanup } from './support/resources';
import { fixed, heading, table } from './support/report';
import { measureStatementCosts, type Cost } from './pipeline/statement-costs';

/**
 * DATABASE_POOL_MODE: the hot path's repository statements as named prepared statements
 * (`session`, today's default: parsed and planned once per connection) against unnamed ones
 * (`transaction`, what a transaction pooler such as PgBouncer 1.18 requires: parsed and
 * planned on every call), both straight to Postgres so that only the statement naming
 * differs. Rounds alternate between the modes, each on fresh jobs; the median round counts.
 */
const ROUNDS = Number(process.env.BENCH_POOL_MODE_ROUNDS ?? 3);
const JOBS = Number(process.env.BENCH_POOL_MODE_JOBS ?? 400);
/** The calls a task makes on its way through a worker (createJob is the supervisor's). */
const HOT_PATH = ['createJob (one job + 6 tasks)', 'claimTask', 'checkpoint', 'completeTask', 'findTaskOutcomes (5 rows)'];

const medianOf = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function runPoolModeBench(): Promise<boolean> {
  heading(`Bench 5: named vs unnamed statements (DATABASE_POOL_MODE), ${ROUNDS} rounds x ${JOBS} jobs per mode`);
  const cleanup = new Cleanup();
  try {
    const dbUrl = await createBenchDatabase(cleanup);
    const rounds: Record<'session' | 'transaction', Cost[][]> = { session: [], transaction: [] };
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const mode of round % 2 === 0 ? (['session', 'transaction'] as const) : (['transaction', 'session'] as const)) {
        rounds[mode].push((await measureStatementCosts(dbUrl, JOBS, mode)).filter((c) => HOT_PATH.includes(c.name)));
      }
    }
    const summary = (mode: 'session' | 'transaction', name: string) => {
      const costs = rounds[mode].map((r) => {
        const cost = r.find((c) => c.name === name);
        if (cost === undefined) throw new Error(`bench 5: the statement-cost step measured no "${name}" (it measures: ${r.map((c) => c.name).join(', ')})`);
        return cost;
      });
      return { perSecond: medianOf(costs.map((c) => c.perSecond)), nodeUs: medianOf(costs.map((c) => c.nodeUs)), postgresUs: medianOf(costs.map((c) => c.postgresUs)) };
    };
    const rows = HOT_PATH.map((name) => {
      const named = summary('session', name);
      const unnamed = summary('transaction', name);
      return [
        name,
        fixed(named.perSecond),
        fixed(unnamed.perSecond),
        `${fixed(((unnamed.perSecond - named.perSecond) / named.perSecond) * 100, 1)} %`,
        fixed(named.postgresUs),
        fixed(unnamed.postgresUs),
        fixed(named.nodeUs),
        fixed(unnamed.nodeUs),
      ];
    });
    console.log(
      table(['call (16 in flight, median round)', 'named calls/s', 'unnamed calls/s', 'throughput change', 'named PG µs', 'unnamed PG µs', 'named node µs', 'unnamed node µs'], rows),
    );
    // A measurement, not a bar: the pooler needs the unnamed path whatever it costs.
    return true;
  } finally {
    await cleanup.runAll();
  }
}
