import { RequestMetaSchema } from '@switchyard/contracts';
import { createLogger } from '@switchyard/observability';
import { InMemoryRetryBudgetStore } from './budget/retry-budget';
import { FakeClock } from './clock';
import { parseRouterConfig } from './config/router-config.loader';
import type { TargetConfig } from './config/router-config.schema';
import type { SlotResult, TargetLimiter } from './fleet/target-limiter';
import type { ChatProvider, ProviderCall } from './providers/chat-provider';
import { Router } from './router';
import { NoEligibleTargetError } from './routing/no-eligible-target.error';
import { stateSettings, TargetState } from './state/target-state';

/** A fleet limiter whose other processes hold `busy[target]` slots. */
class FakeFleet implements TargetLimiter {
  readonly held = new Map<string, number>();
  readonly asked: string[] = [];
  constructor(readonly busy: Record<string, number>) {}
  acquire(target: TargetConfig): Promise<SlotResult> {
    this.asked.push(target.name);
    const mine = this.held.get(target.name) ?? 0;
    if (mine + (this.busy[target.name] ?? 0) >= target.max_concurrency) return Promise.resolve({ granted: false, reason: 'concurrency', retryAfterMs: 5_000 });
    this.held.set(target.name, mine + 1);
    return Promise.resolve({ granted: true, slot: { release: () => this.held.set(target.name, (this.held.get(target.name) ?? 1) - 1) } });
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function setup(fleet: FakeFleet, slotWaitMs = 1_000) {
  const clock = new FakeClock();
  const calls: string[] = [];
  const config = parseRouterConfig(
    `
router:
  fleet_limits: {slot_wait_ms: ${slotWaitMs}, slot_poll_ms: 100}
  targets:
    - {name: gpu, type: local, endpoint: "http://127.0.0.1:1/v1", model: a, max_concurrency: 2, context_window: 1000, cost_per_1k_tokens: {input: 0, output: 0}}
    - {name: cloud, type: cloud, endpoint: "http://127.0.0.1:3/v1", model: c, max_concurrency: 50, context_window: 128000, cost_per_1k_tokens: {input: 0.002, output: 0.008}}
  routes:
    - {name: sensitive, when: {sensitivity: sensitive}, targets: [gpu], priority: 100}
    - {name: main, when: {all_else: true}, targets: [gpu, cloud], priority: 1}
`,
    'fleet-limits.spec',
  );
  const router = new Router({
    config,
    secrets: () => undefined,
    logger: createLogger('fleet-limits-spec', 'silent'),
    clock,
    random: () => 0.5,
    // Each wait moves the fake clock; the fleet frees a slot after the second wait.
    sleep: (ms) => {
      clock.advance(ms);
      waits += 1;
      if (waits === 2) fleet.busy.gpu = 0;
      return Promise.resolve();
    },
    retryBudget: new InMemoryRetryBudgetStore(clock),
    limiter: fleet,
    providerFactory: (target) =>
      ({
        target,
        complete: (call: ProviderCall) => {
          calls.push(target.name);
          call.onConnected?.();
          return Promise.resolve({ content: 'ok', model: target.model, usage: { inputTokens: 1, outputTokens: 1 } });
        },
      }) as ChatProvider,
  });
  let waits = 0;
  return { router, calls, fleet, clock };
}

const messages = [{ role: 'user' as const, content: 'hi' }];

describe('Router with a fleet-wide limiter', () => {
  it('a target full fleet-wide is skipped for the next candidate, as a full one here would be', async () => {
    const { router, calls } = setup(new FakeFleet({ gpu: 2 }));
    const result = await router.chat({ meta: RequestMetaSchema.parse({ sensitivity: 'internal' }), messages });
    expect(result.target).toBe('cloud');
    expect(calls).toEqual(['cloud']);
  });

  it('a sensitive call finding its only local target full fleet-wide waits for a slot instead of overloading it', async () => {
    const fleet = new FakeFleet({ gpu: 2 });
    const { router, calls } = setup(fleet);
    const result = await router.chat({ meta: RequestMetaSchema.parse({ sensitivity: 'sensitive' }), messages });
    expect(result.target).toBe('gpu');
    expect(calls).toEqual(['gpu']);
    expect(fleet.held.get('gpu')).toBe(0);
  });

  it('gives up after slot_wait_ms with the fleet reason in the explanation', async () => {
    const fleet = new FakeFleet({ gpu: 2 });
    const { router, calls } = setup(fleet, 150);
    const error = await router.chat({ meta: RequestMetaSchema.parse({ sensitivity: 'sensitive' }), messages, slotWaitMs: 50 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoEligibleTargetError);
    expect((error as NoEligibleTargetError).explanation.candidates.map((c) => c.reason)).toContain('fleet_concurrency_full');
    expect(calls).toEqual([]);
  });
});

describe('Router breakers shared with the fleet', () => {
  it('tells listeners when its own traffic opens a breaker, and opens one another process reports without calling it', async () => {
    const fleet = new FakeFleet({});
    const { router, calls } = setup(fleet);
    const opened: [string, number][] = [];
    router.onBreakerOpen((target, left) => opened.push([target, left]));
    router.applyFleetBreakerOpen('gpu', 20_000);
    expect(opened).toEqual([]);
    expect(router.snapshot().find((t) => t.name === 'gpu')?.breaker).toBe('open');
    const result = await router.chat({ meta: RequestMetaSchema.parse({ sensitivity: 'internal' }), messages });
    expect(result.target).toBe('cloud');
    expect(calls).toEqual(['cloud']);
  });
});

describe('Router structured output', () => {
  it('a json_schema reply the schema refuses is bad output of that target: the call moves on to the next one', async () => {
    const clock = new FakeClock();
    const calls: string[] = [];
    const config = parseRouterConfig(
      `
router:
  targets:
    - {name: gpu, type: local, endpoint: "http://127.0.0.1:1/v1", model: a, max_concurrency: 2, context_window: 1000, cost_per_1k_tokens: {input: 0, output: 0}}
    - {name: cloud, type: cloud, endpoint: "http://127.0.0.1:3/v1", model: c, max_concurrency: 50, context_window: 128000, cost_per_1k_tokens: {input: 0.002, output: 0.008}}
  routes:
    - {name: main, when: {all_else: true}, targets: [gpu, cloud], priority: 1}
`,
      'structured.spec',
    );
    const replies: Record<string, string> = { gpu: '{"answer": 42}', cloud: '{"answer": "forty-two"}' };
    const deltas: string[] = [];
    const router = new Router({
      config,
      secrets: () => undefined,
      logger: createLogger('structured-spec', 'silent'),
      clock,
      sleep: () => Promise.resolve(),
      retryBudget: new InMemoryRetryBudgetStore(clock),
      providerFactory: (target) =>
        ({
          target,
          complete: (call: ProviderCall) => {
            calls.push(target.name);
            call.passThrough?.onEvents?.(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: replies[target.name]! } }] })}\n\n`);
            return Promise.resolve({ content: replies[target.name]!, model: target.model, finishReason: 'stop' });
          },
        }) as ChatProvider,
    });
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const result = await router.chat({
      meta: RequestMetaSchema.parse({}),
      messages,
      responseFormat: { type: 'json_schema', json_schema: { name: 'a', schema } },
      passThrough: { includeUsage: false, assemble: true, onEvents: (sse) => deltas.push(sse) },
    });
    expect(calls).toEqual(['gpu', 'cloud']);
    expect(result).toMatchObject({ target: 'cloud', content: '{"answer": "forty-two"}', finishReason: 'stop' });
    // The refused answer never reached the caller's stream.
    expect(deltas).toEqual([`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: '{"answer": "forty-two"}' } }] })}\n\n`]);
  });
});

describe('Router recovery decided once for the fleet', () => {
  it('a breaker opened elsewhere stays open here while the opener probes, and closes when the opener says so', async () => {
    const fleet = new FakeFleet({});
    const { router, calls, clock } = setup(fleet);
    router.applyFleetBreakerOpen('gpu', 1_000);
    clock.advance(1_500);
    // The opener's cooldown is over and it is probing: this process does not probe too.
    expect(router.snapshot().find((t) => t.name === 'gpu')?.breaker).toBe('open');
    expect((await router.chat({ meta: RequestMetaSchema.parse({ sensitivity: 'internal' }), messages })).target).toBe('cloud');
    router.applyFleetBreakerClose('gpu');
    // Closed, and recovering its share like after its own breaker: the call that only it may take goes there at once.
    expect(router.snapshot().find((t) => t.name === 'gpu')?.breaker).toBe('closed');
    expect((await router.chat({ meta: RequestMetaSchema.parse({ sensitivity: 'sensitive' }), messages })).target).toBe('gpu');
    expect(calls).toEqual(['cloud', 'gpu']);
  });

  it('its own half-open probes closing the breaker are told to the fleet', () => {
    const changes: string[] = [];
    const state = new TargetState(
      stateSettings(parseRouterConfig(`router:\n  breaker: {consecutive_failures: 1, cooldown_ms: 100, half_open_probes: 1}\n  targets:\n    - {name: gpu, type: local, endpoint: "http://127.0.0.1:1/v1", model: a, max_concurrency: 2, context_window: 1000, cost_per_1k_tokens: {input: 0, output: 0}}\n  routes:\n    - {name: main, when: {all_else: true}, target: gpu}\n`, 's').config),
      (change) => changes.push(change),
    );
    state.observe(0, { ok: false, failure: 'server', latencyMs: 1 });
    state.begin(200, 0);
    state.end(200, { ok: true, latencyMs: 1 });
    expect(changes).toEqual(['open', 'closed']);
  });
});
