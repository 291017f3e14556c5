import { APIError } from 'openai';
import { RequestMetaSchema } from '@switchyard/contracts';
import { createLogger } from '@switchyard/observability';
import { parseRouterConfig } from './config/router-config.loader';
import type { AttemptEvent, AttemptRecorder, AttemptStart } from './observe/call-observer';
import type { ChatProvider, ProviderCall, ProviderResult } from './providers/chat-provider';
import { Router } from './router';

const TARGETS = `
    - {name: local_a, type: local, endpoint: "http://127.0.0.1:1/v1", model: a, max_concurrency: 4, context_window: 1000, cost_per_1k_tokens: {input: 0.5, output: 1}}
    - {name: local_b, type: local, endpoint: "http://127.0.0.1:2/v1", model: b, max_concurrency: 4, context_window: 1000, cost_per_1k_tokens: {input: 0.5, output: 1}}`;

/** local_a answers 500, local_b answers; every step (started, sent, finished) is logged in order. */
function setup() {
  const log: string[] = [];
  const events: AttemptEvent[] = [];
  const behaviours: Record<string, () => Promise<ProviderResult>> = {
    local_a: () => Promise.reject(APIError.generate(500, { error: { message: 'status 500' } }, 'status 500', new Headers())),
    local_b: () => Promise.resolve({ content: 'answer', model: 'b', usage: { inputTokens: 10, outputTokens: 4 } }),
  };
  const router = new Router({
    config: parseRouterConfig(
      `
router:
  max_attempts_per_call: 3
  targets:${TARGETS}
  routes:
    - {name: main, when: {all_else: true}, targets: [local_a, local_b], priority: 1}
`,
      'attempt-recorder.spec',
    ),
    secrets: () => undefined,
    logger: createLogger('attempt-recorder-spec', 'silent'),
    sleep: () => Promise.resolve(),
    observers: [{ onAttempt: (event) => events.push(event) }],
    providerFactory: (target) =>
      ({
        target,
        complete: (call: ProviderCall) => {
          log.push(`sent ${target.name}`);
          call.onConnected?.();
          call.onFirstToken?.();
          return behaviours[target.name]!();
        },
      }) as ChatProvider,
  });
  return { router, log, events };
}

const request = { meta: RequestMetaSchema.parse({ task_type: 'extract', complexity: 'low' }), messages: [{ role: 'user' as const, content: 'hello there' }] };

describe('Router.chat with an attempt recorder', () => {
  it('awaits the record of each attempt before its request is sent, then tells the recorder its outcome', async () => {
    const { router, log, events } = setup();
    const starts: AttemptStart[] = [];
    const recorder: AttemptRecorder = {
      started: async (attempt) => {
        await Promise.resolve();
        starts.push(attempt);
        log.push(`started ${attempt.target.name} #${attempt.attempt}`);
      },
      finished: (event) => log.push(`finished ${event.target.name} #${event.attempt} ${event.outcome}`),
    };

    const result = await router.chat({ ...request, context: { tenantId: 'acme', taskId: 't' }, attemptRecorder: recorder });

    expect(result.target).toBe('local_b');
    expect(log).toEqual(['started local_a #1', 'sent local_a', 'finished local_a #1 error', 'started local_b #2', 'sent local_b', 'finished local_b #2 ok']);
    // What an attempt that never finishes is known by: its estimated input and that input's price.
    expect(starts[0]).toMatchObject({ rule: 'main', context: { tenantId: 'acme', taskId: 't' } });
    expect(starts[0]!.estimatedInputTokens).toBeGreaterThan(0);
    expect(starts[0]!.estimatedInputCostUsd).toBeCloseTo((starts[0]!.estimatedInputTokens * 0.5) / 1000);
    // The observers still see every attempt, flagged so that a buffered ledger does not count it again.
    expect(events.map((e) => [e.target.name, e.attempt, e.recordedByCaller])).toEqual([
      ['local_a', 1, true],
      ['local_b', 2, true],
    ]);
  });

  it('fails the call without sending anything when the attempt cannot be recorded', async () => {
    const { router, log } = setup();
    const down = new Error('ledger unreachable');
    const recorder: AttemptRecorder = { started: () => Promise.reject(down), finished: () => undefined };

    await expect(router.chat({ ...request, attemptRecorder: recorder })).rejects.toBe(down);
    expect(log).toEqual([]);
    expect(router.snapshot().map((t) => t.inFlight)).toEqual([0, 0]);
  });

  it('leaves the attempts of a call without a recorder unflagged, numbered all the same', async () => {
    const { router, events } = setup();
    await router.chat(request);
    expect(events.map((e) => [e.attempt, e.recordedByCaller])).toEqual([
      [1, undefined],
      [2, undefined],
    ]);
  });
});
