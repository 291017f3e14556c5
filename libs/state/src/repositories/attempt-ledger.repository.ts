import type { Pool } from 'pg';
import { poolBehind, type Database } from '../database';
import { modelCallLedger, type NewLedgerRow } from '../schema';
import { jsonRowInsert } from './json-row-insert';

/** A ledger row written durably for one upstream attempt, completed later under its `attemptId`. */
export type AttemptLedgerRow = NewLedgerRow & { attemptId: string };

const attemptInsert = jsonRowInsert<AttemptLedgerRow>(
  modelCallLedger,
  { at: 'now()', input_tokens: '0', output_tokens: '0', usage_estimated: 'false', cost_usd: '0' },
  { generated: ['id'] },
);

const UPDATED_COLUMNS = attemptInsert.columns
  .split(', ')
  .filter((column) => column !== 'attempt_id')
  .map((column) => `${column} = excluded.${column}`)
  .join(', ');

/**
 * Inserts the attempts' rows from the JSON array in parameter `$n`; an attempt whose row is
 * already there (written `in_flight` before its request was sent, or marked `abandoned`
 * since) gets the row replaced by what it turned out to be.
 */
export function upsertAttemptsSql(parameter: number): string {
  return `${attemptInsert.insertFromArray(parameter)} on conflict (attempt_id) where attempt_id is not null do update set ${UPDATED_COLUMNS}`;
}

export function attemptRowsJson(rows: readonly AttemptLedgerRow[]): string {
  return JSON.stringify(rows.map(attemptInsert.toJson));
}

const STARTED_SQL = `/* sy:attemptStarted */ ${attemptInsert.insertFromArray(1)}`;
// The abandoned rows are the task's only ones in flight: a task makes one call at a time, and
// this is the first attempt of the current run's call.
const FIRST_STARTED_SQL = `/* sy:firstAttemptStarted */ with abandoned as (
  update model_call_ledger set outcome = 'abandoned' where task_id = $2::uuid and outcome = 'in_flight'
) ${attemptInsert.insertFromArray(1)}`;
const FINISHED_SQL = `/* sy:attemptsFinished */ ${upsertAttemptsSql(1)}`;
// Several calls' attempts at once (group commit): the rows of `$1`, and the tasks in `$2` whose earlier runs' rows are abandoned.
const MANY_STARTED_SQL = `/* sy:attemptsStarted */ with abandoned as (
  update model_call_ledger set outcome = 'abandoned' where task_id = any($2::uuid[]) and outcome = 'in_flight'
) ${attemptInsert.insertFromArray(1)}`;

/** An attempt about to be sent, as `recordStarted` takes it. */
export interface StartedAttempt {
  row: AttemptLedgerRow;
  abandonEarlier: boolean;
}

/**
 * The cost ledger's durable path for a worker's job calls: each attempt's row is written
 * before its request goes upstream and completed after, so a worker killed at any point
 * leaves a row for every attempt it sent. (The answer's own attempts are completed with the
 * paid-once answer, `ModelCallResultRepository.store`.)
 */
export class AttemptLedgerRepository {
  private readonly pool: Pool;

  constructor(db: Database, pool?: Pool) {
    this.pool = poolBehind(db, pool, 'AttemptLedgerRepository');
  }

  /**
   * An attempt about to be sent: its row, `in_flight`. With `abandonEarlier` (the first
   * attempt of a call), rows of the same task still in flight from an earlier run — a worker
   * that died mid-call — become `abandoned`, in the same statement. A run that was only
   * presumed dead and finishes after all replaces its row with the real outcome.
   */
  async recordStarted(row: AttemptLedgerRow, options: { abandonEarlier: boolean }): Promise<void> {
    const values = [attemptRowsJson([row])];
    if (options.abandonEarlier && row.taskId) {
      await this.pool.query({ name: 'sy-first-attempt-started', text: FIRST_STARTED_SQL, values: [...values, row.taskId] });
      return;
    }
    await this.pool.query({ name: 'sy-attempt-started', text: STARTED_SQL, values });
  }

  /**
   * `recordStarted` of several calls' attempts in one statement (one transaction): every row,
   * or none. Each task makes one call at a time, so no two of them are the same task's.
   */
  async recordStartedMany(attempts: readonly StartedAttempt[]): Promise<void> {
    const abandoning = attempts.filter((a) => a.abandonEarlier && a.row.taskId).map((a) => a.row.taskId!);
    await this.pool.query({ name: 'sy-attempts-started', text: MANY_STARTED_SQL, values: [attemptRowsJson(attempts.map((a) => a.row)), abandoning] });
  }

  /** Attempts that finished (a failed call's): each row completed, or added if it was never started. */
  async recordFinished(rows: readonly AttemptLedgerRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.pool.query({ name: 'sy-attempts-finished', text: FINISHED_SQL, values: [attemptRowsJson(rows)] });
  }
}
