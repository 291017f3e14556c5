import type { ModelChatRequest, ModelChatResult, ModelRouter } from '@switchyard/orchestration';

/**
 * The one substitute in the pipeline bench: a model router that answers at once with a
 * valid structured summary. The bench measures orchestration overhead (queues, Postgres
 * state, checkpoints), not an LLM; a real call would add its own latency on top.
 */
export class InstantModelRouter implements ModelRouter {
  calls = 0;

  async chat(request: ModelChatRequest): Promise<ModelChatResult> {
    this.calls += 1;
    const content = JSON.stringify({
      conclusion: `bench answer for ${request.meta.task_type}`,
      evidence: ['bench evidence'],
      confidence: 0.9,
    });
    return {
      content,
      target: 'bench_instant',
      model: 'bench-instant',
      rule: 'bench',
      usage: { inputTokens: 40, outputTokens: 20 },
      latencyMs: 0,
      costUsd: 0,
      attempts: [{ target: 'bench_instant', model: 'bench-instant', rule: 'bench', outcome: 'ok', latencyMs: 0 }],
    };
  }
}
