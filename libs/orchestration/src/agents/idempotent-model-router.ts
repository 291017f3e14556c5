import { randomUUID } from 'node:crypto';
import { toLedgerEntry, toStartedLedgerEntry, type AttemptEvent, type AttemptRecorder, type AttemptStart } from '@switchyard/router';
import type { AttemptLedgerRepository, AttemptLedgerRow, ModelCallResultRepository } from '@switchyard/state';
import type { ModelChatRequest, ModelChatResult, ModelRouter } from './model-router.port';

/** What the decorator needs from the paid-once store (the state lib's repository). */
export type ModelCallResultStore = Pick<ModelCallResultRepository, 'find' | 'store'>;

/** Where each upstream attempt's ledger row is written before its request is sent (the state lib's repository). */
export type AttemptLedgerStore = Pick<AttemptLedgerRepository, 'recordStarted' | 'recordFinished'>;

export interface DurableAttemptsOptions {
  ledger: AttemptLedgerStore;
  /** Names one run of a call; its attempts are `<run>:<n>`. */
  newRunId?: () => string;
  /** Told how many attempts' rows were completed (the ledger's written-rows metric). */
  onRowsWritten?: (rows: number) => void;
}

/**
 * Paid-once model calls: a call with an idempotency key (task, step, call of the step) first
 * looks for an answer already obtained under that key and reuses it (except under the task's
 * first lease, when no run before it can have obtained one); a new answer is stored
 * in Postgres before the caller sees it, so before the step's checkpoint. A step replayed
 * after a crash between the answer and the checkpoint therefore never pays twice.
 *
 * With an attempt ledger, the cost of such a call is as durable as its answer: each upstream
 * attempt's row is written (`in_flight`) before its request is sent; the answer's attempts
 * are completed in the statement that stores the answer, a failed call's before its failure
 * is thrown. An attempt cut off by a worker's death stays in the ledger and is marked
 * `abandoned` when the task's next run makes its call. One write per attempt is added to the
 * call path: a few milliseconds against an upstream call of seconds.
 */
export class IdempotentModelRouter implements ModelRouter {
  private readonly attemptLedger: AttemptLedgerStore | undefined;
  private readonly newRunId: () => string;
  private readonly onRowsWritten: (rows: number) => void;

  constructor(
    private readonly inner: ModelRouter,
    private readonly store: ModelCallResultStore,
    durable?: DurableAttemptsOptions,
  ) {
    this.attemptLedger = durable?.ledger;
    this.newRunId = durable?.newRunId ?? randomUUID;
    this.onRowsWritten = durable?.onRowsWritten ?? (() => undefined);
  }

  async chat(request: ModelChatRequest): Promise<ModelChatResult> {
    const key = request.idempotencyKey;
    if (!key || !request.context) return this.inner.chat(request);
    // Under a task's first lease nothing can be stored yet: one statement less per call.
    const stored = request.context.firstLease ? undefined : await this.store.find(key);
    if (stored) return reusedResult(stored);
    const recorder = this.attemptLedger ? new DurableAttemptRecorder(this.attemptLedger, this.newRunId()) : undefined;
    let result: ModelChatResult;
    try {
      result = await this.inner.chat(recorder ? { ...request, attemptRecorder: recorder } : request);
    } catch (error) {
      // The call's failure is what the runner acts on. Should this write fail as well, the
      // attempts' rows stay in flight and the task's next run marks them abandoned: each
      // attempt keeps its row, only its outcome is lost.
      await recorder?.writeFinished().then(
        () => this.onRowsWritten(recorder.finishedRows().length),
        () => undefined,
      );
      throw error;
    }
    const kept = await this.store.store(
      {
        idempotencyKey: key,
        tenantId: request.context.tenantId,
        taskId: request.context.taskId,
        content: result.content,
        target: result.target,
        model: result.model,
        rule: result.rule,
        usage: result.usage,
        costUsd: result.costUsd,
      },
      recorder?.finishedRows() ?? [],
    );
    if (recorder) this.onRowsWritten(recorder.finishedRows().length);
    // Another run of the same step (a presumed-dead worker that came back) stored first:
    // every run of the step goes on with that one answer.
    return kept.content === result.content ? result : reusedResult(kept);
  }

  reportBadOutput(target: string): void {
    this.inner.reportBadOutput?.(target);
  }
}

/** One call's attempts, keyed `<run>:<attempt>`: started rows written at once, finished rows kept for the call's end. */
class DurableAttemptRecorder implements AttemptRecorder {
  private readonly finishedAttempts: AttemptLedgerRow[] = [];

  constructor(
    private readonly ledger: AttemptLedgerStore,
    private readonly runId: string,
  ) {}

  async started(attempt: AttemptStart): Promise<void> {
    const row = { ...toStartedLedgerEntry(attempt, 'worker'), attemptId: this.attemptId(attempt.attempt) };
    await this.ledger.recordStarted(row, { abandonEarlier: attempt.attempt === 1 });
  }

  finished(event: AttemptEvent): void {
    this.finishedAttempts.push({ ...toLedgerEntry(event, 'worker'), attemptId: this.attemptId(event.attempt) });
  }

  finishedRows(): readonly AttemptLedgerRow[] {
    return this.finishedAttempts;
  }

  writeFinished(): Promise<void> {
    return this.ledger.recordFinished(this.finishedAttempts);
  }

  private attemptId(attempt: number): string {
    return `${this.runId}:${attempt}`;
  }
}

function reusedResult(stored: Awaited<ReturnType<ModelCallResultStore['find']>> & object): ModelChatResult {
  return {
    content: stored.content,
    target: stored.target,
    model: stored.model,
    rule: stored.rule,
    usage: stored.usage,
    latencyMs: 0,
    // Counted on the task when the step checkpoints; the crash lost the first count.
    costUsd: stored.costUsd,
    attempts: [{ target: stored.target, model: stored.model, rule: stored.rule, outcome: 'ok', latencyMs: 0 }],
    reused: true,
  };
}
