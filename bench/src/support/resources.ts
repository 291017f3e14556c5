import { randomBytes } from 'node:crypto';
import IORedis, { type Redis } from 'ioredis';
import type { Pool, PoolClient } from 'pg';
import { dropDatabase, migrateDatabase } from '@switchyard/state';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const BASE_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Profiling switches (see `createBenchDatabase`). */
const KEEP_DATABASE = process.env.BENCH_KEEP_DATABASE === '1';
const EXPERIMENT_SQL = process.env.BENCH_EXPERIMENT_SQL;

/** Things to undo when the bench ends, however it ends (last registered runs first). */
export class Cleanup {
  private readonly steps: { name: string; run: () => Promise<unknown> }[] = [];
  private draining: Promise<void> | undefined;

  add(name: string, run: () => Promise<unknown>): void {
    this.steps.push({ name, run });
  }

  /** Runs every step once; a second caller (a signal during the normal end) waits for the same run. */
  runAll(): Promise<void> {
    this.draining ??= this.drain();
    return this.draining;
  }

  private async drain(): Promise<void> {
    while (this.steps.length > 0) {
      const step = this.steps.pop()!;
      try {
        await step.run();
      } catch (error) {
        console.error(`cleanup "${step.name}" failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}

/**
 * A fresh database with the real migrations; the name is random so runs never meet. Profiling
 * switches: BENCH_KEEP_DATABASE=1 leaves it behind (to read its statistics and plans afterwards);
 * BENCH_EXPERIMENT_SQL runs after the migrations (e.g. an index dropped, to measure what it costs).
 */
export async function createBenchDatabase(cleanup: Cleanup): Promise<string> {
  const url = new URL(BASE_DATABASE_URL);
  url.pathname = `/switchyard_bench_${randomBytes(6).toString('hex')}`;
  const dbUrl = url.toString();
  // Registered first so that it runs last, after every pool on it is closed.
  if (!KEEP_DATABASE) cleanup.add(`drop database ${url.pathname.slice(1)}`, () => dropDatabase(dbUrl));
  await migrateDatabase(dbUrl);
  if (EXPERIMENT_SQL) {
    const { Client } = await import('pg');
    const client = new Client({ connectionString: dbUrl });
    await client.connect();
    await client.query(EXPERIMENT_SQL);
    await client.end();
  }
  return dbUrl;
}

export function benchPrefix(): string {
  return `{sy-bench-${randomBytes(4).toString('hex')}}`;
}

/** A connection as the apps make it (`libs/platform` connectRedis): BullMQ needs maxRetriesPerRequest null. */
export function connectRedis(name: string): Redis {
  return new IORedis(REDIS_URL, { connectionName: name, maxRetriesPerRequest: null, enableReadyCheck: true });
}

/** Deletes every key starting with `prefix` (SCAN MATCH, then UNLINK); returns how many. */
export async function deleteKeys(prefix: string): Promise<number> {
  const redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: 1, connectionName: 'sy-bench-cleanup' });
  let deleted = 0;
  try {
    const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (keys.length > 0) deleted += await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/**
 * Counts every statement a pool sends, by kind. Wraps each client's `query` as the pool
 * connects it, so pooled queries and transactions (which hold a client) are both seen.
 */
export class QueryCounter {
  total = 0;
  readonly byKind = new Map<string, number>();
  /** The same SQL text comes back on every call of a statement: classify it once. */
  private readonly kinds = new Map<string, string>();

  attach(pool: Pool): void {
    pool.on('connect', (client: PoolClient) => {
      const original = client.query as (...args: unknown[]) => unknown;
      const wrapped = (...args: unknown[]): unknown => {
        const first = args[0];
        const text = String(typeof first === 'string' ? first : ((first as { text?: unknown } | null)?.text ?? ''));
        // The bench's own checks are marked and not counted.
        if (!text.startsWith('/* bench */')) {
          this.total += 1;
          let kind = this.kinds.get(text);
          if (kind === undefined) {
            kind = queryKind(text);
            if (this.kinds.size < 1_000) this.kinds.set(text, kind);
          }
          this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
        }
        return original.apply(client, args);
      };
      client.query = wrapped as PoolClient['query'];
    });
  }

  reset(): void {
    this.total = 0;
    this.byKind.clear();
  }
}

/** Names the statements of the state repositories (and the bench's own) by their SQL shape. */
export function queryKind(sql: string): string {
  const s = sql.replace(/\s+/g, ' ').trim().toLowerCase();
  if (s === 'begin' || s.startsWith('begin ')) return 'begin';
  if (s === 'commit') return 'commit';
  // The repository's pre-built statements name themselves: /* sy:<name> */ ...
  const named = /^\s*\/\* sy:(\w+) \*\//.exec(sql);
  if (named) return named[1] === 'taskStatus' ? 'claim miss (status read)' : named[1]!;
  if (s === 'rollback') return 'rollback';
  if (s.startsWith('insert into "agent_task_state"')) return 'insert (createJob)';
  if (s.startsWith('with claimed as')) return 'claimTask';
  if (s.startsWith('with done as') && s.includes("status = 'success'")) return 'completeTask';
  if (s.startsWith('with done as') && s.includes("status = 'failed'")) return 'failTask';
  if (s.startsWith('update "agent_task_state" set "current_step"') || s.startsWith('update "agent_task_state" set "step_checkpoints"')) return 'checkpoint';
  if (s.startsWith('update "agent_task_state" set "updated_at"')) return 'heartbeat';
  if (s.startsWith('update "agent_task_state" set "status" = $1, "lease_owner"')) return 'releaseTask';
  if (s.includes('"agent_task_state"."role" =')) return 'findTasksOfRole';
  if (s.startsWith('select "status" from "agent_task_state"')) return 'claim miss (status read)';
  if (s.startsWith('select "workflow_definition"')) return 'findWorkflowDefinition';
  return s.slice(0, 48);
}
