import { Worker, type Processor } from 'bullmq';
import { OpenAiChatProvider, parseRouterConfig } from '@switchyard/router';
import { connectRedis } from '../support/resources';
import { FLOW_CHILD_QUEUE, FLOW_PARENT_QUEUE, type FlowJobData } from './flows';

/**
 * A worker process of the end-to-end bench's BullMQ-only sides (forked by stack.ts), one
 * Worker per queue of the doc_review-shaped flow:
 *
 *   noop: the processors do nothing (the raw BullMQ baseline)
 *   sdk:  each queue job makes the model call its Switchyard task would make, through the
 *         openai SDK as our provider makes it (streamed, `include_usage`, our undici pool),
 *         straight to llm-sim: the floor, with no Postgres, routing, ledger or checkpoints
 *
 * argv: <noop|sdk> <BullMQ prefix> <concurrency per queue> [<extract endpoint> <extract model>
 * <synthesize endpoint> <synthesize model>]. Prints `flow worker ready` when both Workers are.
 */
type Mode = 'noop' | 'sdk';

function simProvider(name: string, endpoint: string, model: string): OpenAiChatProvider {
  const config = parseRouterConfig(
    `router:
  targets:
    - {name: ${name}, type: local, endpoint: "${endpoint}", model: "${model}", max_concurrency: 1000, context_window: 128000, cost_per_1k_tokens: {input: 0, output: 0}}
  routes:
    - {name: all, when: {all_else: true}, target: ${name}, priority: 1}
`,
    'bench flow worker',
  );
  return new OpenAiChatProvider(config.targets[0]!, 'not-needed');
}

/** One call of the size the real agent sends: its system prompt and the document (or the findings). */
function modelCall(provider: OpenAiChatProvider, system: string, maxTokens: number): Processor<FlowJobData> {
  return async (job) => {
    const result = await provider.complete({
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: job.data.prompt },
      ],
      maxTokens,
      jsonMode: true,
      signal: AbortSignal.timeout(30_000),
      timeoutMs: 30_000,
    });
    return { chars: result.content.length };
  };
}

async function main(): Promise<void> {
  const [mode, prefix, concurrencyText, ...sim] = process.argv.slice(2) as [Mode, string, string, ...string[]];
  const concurrency = Number(concurrencyText);
  let processors: [Processor<FlowJobData>, Processor<FlowJobData>];
  if (mode === 'noop') {
    const noop: Processor<FlowJobData> = async () => ({ ok: true });
    processors = [noop, noop];
  } else {
    const [extractEndpoint, extractModel, synthesizeEndpoint, synthesizeModel] = sim as [string, string, string, string];
    processors = [
      modelCall(simProvider('extract', extractEndpoint, extractModel), 'You are an extraction agent. Extract what bears on the question, quoting evidence verbatim.', 512),
      modelCall(simProvider('synthesize', synthesizeEndpoint, synthesizeModel), 'You are a synthesis agent. Combine the per-document findings into one answer.', 1024),
    ];
  }
  const connections = [connectRedis('sy-bench-flow-child'), connectRedis('sy-bench-flow-parent')];
  const workers = [
    new Worker<FlowJobData>(FLOW_CHILD_QUEUE, processors[0], { connection: connections[0]!, prefix, concurrency }),
    new Worker<FlowJobData>(FLOW_PARENT_QUEUE, processors[1], { connection: connections[1]!, prefix, concurrency }),
  ];
  for (const worker of workers) worker.on('failed', (job, error) => console.error(`flow job ${job?.id} failed: ${error.message}`));
  const stop = () => {
    void Promise.allSettled(workers.map((w) => w.close())).finally(() => {
      connections.forEach((c) => c.disconnect());
      process.exit(0);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  console.log('flow worker ready');
}

void main();
