import { eq } from 'drizzle-orm';
import type { Database } from '../database';
import { modelCallResults, type ModelCallResultRow } from '../schema';

export type NewModelCallResult = Omit<ModelCallResultRow, 'createdAt'>;

/**
 * Model answers already paid for, by idempotency key (task, step, call of the step). The
 * first answer stored for a key wins: a replayed step, or a presumed-dead worker that comes
 * back, reads that one instead of keeping a second.
 */
export class ModelCallResultRepository {
  constructor(private readonly db: Database) {}

  async find(idempotencyKey: string): Promise<ModelCallResultRow | undefined> {
    const [row] = await this.db.select().from(modelCallResults).where(eq(modelCallResults.idempotencyKey, idempotencyKey));
    return row;
  }

  /** Stores the answer unless one is already stored for the key; returns the one that is kept. */
  async store(result: NewModelCallResult): Promise<ModelCallResultRow> {
    const [inserted] = await this.db.insert(modelCallResults).values(result).onConflictDoNothing().returning();
    if (inserted) return inserted;
    const existing = await this.find(result.idempotencyKey);
    if (!existing) throw new Error(`model call result ${result.idempotencyKey} neither inserted nor found`);
    return existing;
  }
}
