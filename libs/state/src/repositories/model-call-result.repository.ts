import type { Pool } from 'pg';
import { poolBehind, type Database } from '../database';
import { modelCallResults, type ModelCallResultRow } from '../schema';
import { attemptRowsJson, upsertAttemptsSql, type AttemptLedgerRow } from './attempt-ledger.repository';
import { jsonRowInsert } from './json-row-insert';

export type NewModelCallResult = Omit<ModelCallResultRow, 'createdAt'>;

const resultInsert = jsonRowInsert<NewModelCallResult>(modelCallResults, { cost_usd: '0', created_at: 'now()' });
// One statement: the call's attempt rows land in the ledger whether or not this answer is the one kept.
const STORE_WITH_ATTEMPTS_SQL = `/* sy:storeCallResult */ with attempts as (${upsertAttemptsSql(2)})
  ${resultInsert.insertFromArray(1)} on conflict do nothing returning created_at`;

// Several calls' answers at once (group commit); the keys returned are the answers inserted.
const STORE_MANY_SQL = `/* sy:storeCallResults */ with attempts as (${upsertAttemptsSql(2)})
  ${resultInsert.insertFromArray(1)} on conflict do nothing returning idempotency_key, created_at`;

// The lookup before a paid-once call (of every run after a task's first): a named statement, no query builder work per call.
const FIND_SQL = `/* sy:findCallResults */ select idempotency_key as "idempotencyKey", tenant_id as "tenantId", task_id as "taskId",
  content, target, model, rule, usage, cost_usd as "costUsd", created_at as "createdAt"
  from model_call_results where idempotency_key = any($1::text[])`;

/** An answer and the ledger rows of the attempts that obtained it, as `store` takes them. */
export interface CallResultToStore {
  result: NewModelCallResult;
  attempts: readonly AttemptLedgerRow[];
}

/**
 * Model answers already paid for, by idempotency key (task, step, call of the step). The
 * first answer stored for a key wins: a replayed step, or a presumed-dead worker that comes
 * back, reads that one instead of keeping a second.
 */
export class ModelCallResultRepository {
  private readonly pool: Pool;

  /** `pool` is the one behind `db` (`DatabaseHandle.pool`); when omitted, drizzle's client is used. */
  constructor(
    private readonly db: Database,
    pool?: Pool,
  ) {
    this.pool = poolBehind(db, pool, 'ModelCallResultRepository');
  }

  async find(idempotencyKey: string): Promise<ModelCallResultRow | undefined> {
    const [row] = await this.findMany([idempotencyKey]);
    return row;
  }

  /** `find` of several keys in one statement, in the order of `keys`. */
  async findMany(keys: readonly string[]): Promise<(ModelCallResultRow | undefined)[]> {
    const { rows } = await this.pool.query<ModelCallResultRow>({ name: 'sy-find-call-results', text: FIND_SQL, values: [keys] });
    if (keys.length === 1) return [rows[0]];
    const byKey = new Map(rows.map((row) => [row.idempotencyKey, row]));
    return keys.map((key) => byKey.get(key));
  }

  /**
   * `store` of several answers in one statement (one transaction): every answer and attempt
   * row, or none. Returns the answer kept for each, in order: its own, or the one stored
   * first for its key (by an earlier statement, or earlier in this one).
   */
  async storeMany(items: readonly CallResultToStore[]): Promise<ModelCallResultRow[]> {
    const { rows } = await this.pool.query<{ idempotency_key: string; created_at: Date }>({
      name: 'sy-store-call-results',
      text: STORE_MANY_SQL,
      values: [JSON.stringify(items.map((item) => resultInsert.toJson(item.result))), attemptRowsJson(items.flatMap((item) => item.attempts))],
    });
    const insertedAt = new Map(rows.map((row) => [row.idempotency_key, row.created_at]));
    const itemsByKey = new Map<string, number>();
    for (const item of items) itemsByKey.set(item.result.idempotencyKey, (itemsByKey.get(item.result.idempotencyKey) ?? 0) + 1);
    const kept = new Map<string, ModelCallResultRow>();
    for (const { result } of items) {
      const createdAt = insertedAt.get(result.idempotencyKey);
      // A key given twice is inserted once, from one of its items: which one is read back below.
      if (createdAt !== undefined && itemsByKey.get(result.idempotencyKey) === 1) kept.set(result.idempotencyKey, { ...result, createdAt });
    }
    const unread = [...itemsByKey.keys()].filter((key) => !kept.has(key));
    if (unread.length > 0) for (const row of await this.findMany(unread)) if (row) kept.set(row.idempotencyKey, row);
    return items.map(({ result }) => {
      const row = kept.get(result.idempotencyKey);
      if (!row) throw new Error(`model call result ${result.idempotencyKey} neither inserted nor found`);
      return row;
    });
  }

  /**
   * Stores the answer unless one is already stored for the key; returns the one that is kept.
   * `attempts` (the ledger rows of the upstream attempts that obtained it) are written in the
   * same statement, so the answer is never durable without its cost.
   */
  async store(result: NewModelCallResult, attempts: readonly AttemptLedgerRow[] = []): Promise<ModelCallResultRow> {
    const inserted = attempts.length === 0 ? await this.insert(result) : await this.insertWithAttempts(result, attempts);
    if (inserted) return inserted;
    const existing = await this.find(result.idempotencyKey);
    if (!existing) throw new Error(`model call result ${result.idempotencyKey} neither inserted nor found`);
    return existing;
  }

  private async insert(result: NewModelCallResult): Promise<ModelCallResultRow | undefined> {
    const [inserted] = await this.db.insert(modelCallResults).values(result).onConflictDoNothing().returning();
    return inserted;
  }

  private async insertWithAttempts(result: NewModelCallResult, attempts: readonly AttemptLedgerRow[]): Promise<ModelCallResultRow | undefined> {
    const { rows } = await this.pool.query<{ created_at: Date }>({
      name: 'sy-store-call-result',
      text: STORE_WITH_ATTEMPTS_SQL,
      values: [JSON.stringify([resultInsert.toJson(result)]), attemptRowsJson(attempts)],
    });
    const [row] = rows;
    return row ? { ...result, createdAt: row.created_at } : undefined;
  }
}
