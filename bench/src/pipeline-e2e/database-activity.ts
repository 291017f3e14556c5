import type { Pool } from 'pg';
import { sleep } from '@switchyard/devkit';

/**
 * What the platform asked of Postgres, from the server's own counters of the bench database
 * (`pg_stat_database`): pg_stat_statements is not preloaded on this server, and the apps'
 * statements cannot be wrapped from outside their processes. A transaction is one statement
 * unless the code opened one explicitly, so transactions per task are a lower bound on
 * statements per task (bench 1 counts the statements themselves, in process).
 */

export interface DatabaseActivity {
  transactions: number;
  rowsInserted: number;
  rowsUpdated: number;
  rowsDeleted: number;
  rowsFetched: number;
}

/**
 * Postgres 15 backends publish their counters at most once a second, and an idle one only
 * after up to 10 s (PGSTAT_IDLE_INTERVAL): wait that long after the last activity to read them.
 */
export const STATS_SETTLE_MS = 11_000;

export async function readDatabaseActivity(pool: Pool, database: string): Promise<DatabaseActivity> {
  const { rows } = await pool.query<{ xacts: string; ins: string; upd: string; del: string; fetched: string }>(
    `select xact_commit + xact_rollback as xacts, tup_inserted as ins, tup_updated as upd, tup_deleted as del, tup_fetched as fetched
       from pg_stat_database where datname = $1`,
    [database],
  );
  const row = rows[0];
  if (!row) throw new Error(`no pg_stat_database row for ${database}`);
  return { transactions: Number(row.xacts), rowsInserted: Number(row.ins), rowsUpdated: Number(row.upd), rowsDeleted: Number(row.del), rowsFetched: Number(row.fetched) };
}

/** Counters after the backends have published what they did so far. */
export async function settledDatabaseActivity(pool: Pool, database: string): Promise<DatabaseActivity> {
  await sleep(STATS_SETTLE_MS);
  return readDatabaseActivity(pool, database);
}

export function activityBetween(before: DatabaseActivity, after: DatabaseActivity): DatabaseActivity {
  return {
    transactions: after.transactions - before.transactions,
    rowsInserted: after.rowsInserted - before.rowsInserted,
    rowsUpdated: after.rowsUpdated - before.rowsUpdated,
    rowsDeleted: after.rowsDeleted - before.rowsDeleted,
    rowsFetched: after.rowsFetched - before.rowsFetched,
  };
}

/** Backends of the platform waiting, sampled from pg_stat_activity: how often, and on what. */
export class WaitSampler {
  samples = 0;
  /** Samples in which at least one platform backend waited on a heavyweight lock. */
  samplesWithLockWait = 0;
  lockWaiters = 0;
  readonly byEvent = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(
    private readonly pool: Pool,
    private readonly database: string,
    private readonly applicationPrefix: string,
  ) {}

  start(everyMs = 100): void {
    this.timer = setInterval(() => void this.sample(), everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async sample(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const { rows } = await this.pool.query<{ type: string; event: string; n: number }>(
        `select wait_event_type as type, wait_event as event, count(*)::int as n from pg_stat_activity
          where datname = $1 and starts_with(application_name, $2) and state = 'active' and wait_event is not null
          group by 1, 2`,
        [this.database, this.applicationPrefix],
      );
      this.samples += 1;
      let locks = 0;
      for (const row of rows) {
        const key = `${row.type}: ${row.event}`;
        this.byEvent.set(key, (this.byEvent.get(key) ?? 0) + row.n);
        if (row.type === 'Lock') locks += row.n;
      }
      if (locks > 0) this.samplesWithLockWait += 1;
      this.lockWaiters += locks;
    } finally {
      this.busy = false;
    }
  }
}
