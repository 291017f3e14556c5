import type { ModelCallResultRepository } from '@switchyard/state';
import type { ModelChatRequest, ModelChatResult, ModelRouter } from './model-router.port';

/** What the decorator needs from the paid-once store (the state lib's repository). */
export type ModelCallResultStore = Pick<ModelCallResultRepository, 'find' | 'store'>;

/**
 * Paid-once model calls: a call with an idempotency key (task, step, call of the step) first
 * looks for an answer already obtained under that key and reuses it; a new answer is stored
 * in Postgres before the caller sees it, so before the step's checkpoint. A step replayed
 * after a crash between the answer and the checkpoint therefore never pays twice.
 */
export class IdempotentModelRouter implements ModelRouter {
  constructor(
    private readonly inner: ModelRouter,
    private readonly store: ModelCallResultStore,
  ) {}

  async chat(request: ModelChatRequest): Promise<ModelChatResult> {
    const key = request.idempotencyKey;
    if (!key || !request.context) return this.inner.chat(request);
    const stored = await this.store.find(key);
    if (stored) return reusedResult(stored);
    const result = await this.inner.chat(request);
    const kept = await this.store.store({
      idempotencyKey: key,
      tenantId: request.context.tenantId,
      taskId: request.context.taskId,
      content: result.content,
      target: result.target,
      model: result.model,
      rule: result.rule,
      usage: result.usage,
      costUsd: result.costUsd,
    });
    // Another run of the same step (a presumed-dead worker that came back) stored first:
    // every run of the step goes on with that one answer.
    return kept.content === result.content ? result : reusedResult(kept);
  }

  reportBadOutput(target: string): void {
    this.inner.reportBadOutput?.(target);
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
