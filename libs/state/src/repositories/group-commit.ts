export interface GroupCommitOptions<T, R> {
  /** Writes several items in one statement (one transaction): all of them, or none. One result per item, in order. */
  writeBatch: (items: readonly T[]) => Promise<R[]>;
  /** Writes one item alone: a lone item, and each item of a batch that failed. */
  writeOne: (item: T) => Promise<R>;
  /** Items per batch at most. Default 64. */
  maxBatch?: number;
  /** Batches being written at once at most; items wait meanwhile. Default 2. */
  maxInFlight?: number;
}

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for one process's writes: the statements of concurrent callers merged into
 * one. An item that finds a free slot is written at once, alone, so a quiet process adds no
 * latency; items that arrive while `maxInFlight` batches are being written wait and go
 * together in the next one. Each caller's promise settles when its own item is durable.
 *
 * A batch that fails is written again item by item, so every caller gets its own outcome: a
 * row the database refuses fails only its caller, and nothing is lost. `writeOne` must be safe
 * after a failed `writeBatch`: a batch statement is one transaction, so a failure there wrote
 * nothing; a failure after it (reading back) needs `writeOne` to be idempotent, so that no
 * item is written twice.
 */
export class GroupCommit<T, R> {
  private readonly waiting: Waiting<T, R>[] = [];
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private inFlight = 0;

  constructor(private readonly options: GroupCommitOptions<T, R>) {
    this.maxBatch = options.maxBatch ?? 64;
    this.maxInFlight = options.maxInFlight ?? 2;
  }

  write(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.startBatches();
    });
  }

  private startBatches(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      this.inFlight += 1;
      void this.writeBatch(batch).finally(() => {
        this.inFlight -= 1;
        this.startBatches();
      });
    }
  }

  private async writeBatch(batch: Waiting<T, R>[]): Promise<void> {
    if (batch.length > 1) {
      let results: R[] | undefined;
      try {
        results = await this.options.writeBatch(batch.map((w) => w.item));
      } catch {
        // Nothing of the batch was written: each item goes again alone, below, and settles its caller.
      }
      if (results !== undefined) {
        batch.forEach((waiting, i) => waiting.resolve(results[i]!));
        return;
      }
    }
    await Promise.all(
      batch.map(async (waiting) => {
        try {
          waiting.resolve(await this.options.writeOne(waiting.item));
        } catch (error) {
          waiting.reject(error);
        }
      }),
    );
  }
}
