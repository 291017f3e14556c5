import type { AttemptLedgerRepository, AttemptLedgerRow, StartedAttempt } from './attempt-ledger.repository';
import { GroupCommit } from './group-commit';
import type { CallResultToStore, ModelCallResultRepository, NewModelCallResult } from './model-call-result.repository';
import type { ModelCallResultRow } from '../schema';

/*
 * A worker's paid-once store and attempt ledger with the statements of its concurrent model
 * calls merged (GroupCommit): one lookup, one insert of started attempts and one insert of
 * answers per batch, instead of one of each per call. Every caller still waits until its own
 * row is durable: an attempt's row before its request is sent, an answer before the caller
 * sees it, so the paid-once guarantee is the one of the repositories underneath.
 */

/** `ModelCallResultRepository.find` / `store`, group-committed. */
export class GroupCommittedCallResults {
  private readonly lookups: GroupCommit<string, ModelCallResultRow | undefined>;
  private readonly stores: GroupCommit<CallResultToStore, ModelCallResultRow>;

  constructor(repository: ModelCallResultRepository) {
    this.lookups = new GroupCommit({ writeBatch: (keys) => repository.findMany(keys), writeOne: (key) => repository.find(key) });
    // A retried item is written again with `store`, which is idempotent: the first answer for a key stays, attempt rows are upserted.
    this.stores = new GroupCommit({ writeBatch: (items) => repository.storeMany(items), writeOne: (item) => repository.store(item.result, item.attempts) });
  }

  find(idempotencyKey: string): Promise<ModelCallResultRow | undefined> {
    return this.lookups.write(idempotencyKey);
  }

  store(result: NewModelCallResult, attempts: readonly AttemptLedgerRow[] = []): Promise<ModelCallResultRow> {
    return this.stores.write({ result, attempts });
  }
}

/** `AttemptLedgerRepository.recordStarted` group-committed; `recordFinished` (a failed call's) as it is. */
export class GroupCommittedAttemptLedger {
  private readonly started: GroupCommit<StartedAttempt, void>;

  constructor(private readonly repository: AttemptLedgerRepository) {
    this.started = new GroupCommit({
      writeBatch: async (attempts) => {
        await repository.recordStartedMany(attempts);
        return attempts.map(() => undefined);
      },
      writeOne: (attempt) => repository.recordStarted(attempt.row, { abandonEarlier: attempt.abandonEarlier }),
    });
  }

  recordStarted(row: AttemptLedgerRow, options: { abandonEarlier: boolean }): Promise<void> {
    return this.started.write({ row, abandonEarlier: options.abandonEarlier });
  }

  recordFinished(rows: readonly AttemptLedgerRow[]): Promise<void> {
    return this.repository.recordFinished(rows);
  }
}
