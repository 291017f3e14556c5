import { APIConnectionError, APIError } from 'openai';
import { RequestMetaSchema, type RequestMetaInput } from '@switchyard/contracts';
import { createLogger } from '@switchyard/observability';
import { InMemoryRetryBudgetStore } from './budget/retry-budget';
import type { ScheduleTimer } from './calls/hedge-race';
import { FakeClock } from './clock';
import { RouterConfigError } from './config/router-config.error';
import { parseRouterConfig } from './config/router-config.loader';
import type { AttemptEvent } from './observe/call-observer';
import type { ChatProvider, ProviderCall, ProviderResult } from './providers/chat-provider';
import { Router } from './router';

type Behaviour = (call: ProviderCall) => Promise<ProviderResult>;

const answer = (content: string): Behaviour => (call) => {
  call.onConnected?.();
  call.onFirstToken?.();
  call.onDelta?.(content);
  return Promise.resolve({ content, model: 'm', usage: { inputTokens: 10, outputTokens: 5 }, firstTokenMs: 5 });
};
/** Connects and then says nothing until the router aborts it (a slow primary). */
const silentUntilAborted: Behaviour = (call) =>
  new Promise((_, reject) => {
    call.onConnected?.();
    call.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
  });
/** Answers once `release()` is called: a call the test keeps in flight. */
function held(content: string) {
  const waiting: (() => void)[] = [];
  const behaviour: Behaviour = (call) =>
    new Promise((resolve) => {
      waiting.push(() => void answer(content)(call).then(resolve));
    });
  return { behaviour, release: () => waiting.splice(0).forEach((go) => go()), pending: () => waiting.length };
}
const serverError: Behaviour = () => Promise.reject(APIError.generate(500, { error: { message: 'boom' } }, 'boom', new Headers()));

/** Fires a scheduled hedge when the test says so. */
function manualTimer() {
  const due: (() => void)[] = [];
  const timer: ScheduleTimer = (_ms, run) => {
    let live = true;
    due.push(() => live && run());
    return () => {
      live = false;
    };
  };
  return { timer, fire: () => due.splice(0).forEach((run) => run()) };
}

const TARGETS = `
    - {name: local_a, type: local, endpoint: "http://127.0.0.1:1/v1", model: a, max_concurrency: 8, context_window: 1000, cost_per_1k_tokens: {input: 0.0001, output: 0.0001}}
    - {name: local_b, type: local, endpoint: "http://127.0.0.1:2/v1", model: b, max_concurrency: 8, context_window: 1000, cost_per_1k_tokens: {input: 0.0004, output: 0.0004}}
    - {name: cloud, type: cloud, endpoint: "http://127.0.0.1:3/v1", model: c, max_concurrency: 50, context_window: 128000, cost_per_1k_tokens: {input: 0.002, output: 0.008}}`;

function setup(behaviours: Record<string, Behaviour>, options: { hedge?: string; extra?: string; knownGood?: () => Promise<boolean> } = {}) {
  const clock = new FakeClock();
  const calls: { target: string; signal: AbortSignal }[] = [];
  const events: AttemptEvent[] = [];
  const hedge = options.hedge ?? '';
  const config = parseRouterConfig(
    `
router:
  max_attempts_per_call: 3
  retry_budget_per_job: 10${options.extra ?? ''}
  targets:${TARGETS}
  routes:
    - {name: sensitive, when: {sensitivity: sensitive}, targets: [local_a], priority: 100${hedge}}
    - {name: main, when: {all_else: true}, targets: [local_a, cloud], priority: 1${hedge}}
`,
    'hedging.spec',
  );
  const manual = manualTimer();
  const budget = new InMemoryRetryBudgetStore(clock);
  const router = new Router({
    config,
    secrets: () => undefined,
    logger: createLogger('hedging-spec', 'silent'),
    clock,
    random: () => 0.5,
    sleep: () => Promise.resolve(),
    timer: manual.timer,
    ...(options.knownGood ? { knownGoodProbe: options.knownGood } : {}),
    retryBudget: budget,
    observers: [{ onAttempt: (event) => events.push(event) }],
    providerFactory: (target) =>
      ({
        target,
        complete: (call: ProviderCall) => {
          calls.push({ target: target.name, signal: call.signal });
          return (behaviours[target.name] ?? answer(`from ${target.name}`))(call);
        },
      }) as ChatProvider,
  });
  return { router, calls, events, fireHedge: manual.fire, fireTimers: manual.fire, budget };
}

const meta = (input: RequestMetaInput = {}) => RequestMetaSchema.parse(input);
const messages = [{ role: 'user' as const, content: 'hello' }];
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('Router hedged requests (hedge_after_ms)', () => {
  it('no first token by hedge_after_ms: the second candidate answers, the primary is aborted upstream, both are in the ledger and the hedge spends budget', async () => {
    const { router, calls, events, fireHedge, budget } = setup({ local_a: silentUntilAborted }, { hedge: ', hedge_after_ms: 50' });
    const pending = router.chat({ meta: meta(), messages, context: { jobId: 'job-h' } });
    await settle();
    expect(calls.map((c) => c.target)).toEqual(['local_a']);
    fireHedge();
    const result = await pending;
    expect(result.target).toBe('cloud');
    expect(result.content).toBe('from cloud');
    expect(calls.map((c) => c.target)).toEqual(['local_a', 'cloud']);
    expect(calls[0]!.signal.aborted).toBe(true);
    expect(result.attempts.map((a) => [a.target, a.outcome, a.message])).toEqual([
      ['local_a', 'error', 'cancelled: the other hedged attempt answered first'],
      ['cloud', 'ok', undefined],
    ]);
    expect(events.map((e) => [e.target.name, e.attempt])).toEqual([
      ['local_a', 1],
      ['cloud', 2],
    ]);
    expect(await budget.spent('job-h')).toBe(1);
    // Losing a race is not a failure of the slow target.
    expect(router.snapshot().find((t) => t.name === 'local_a')!.score).toBe(100);
  });

  it('a primary that answers before hedge_after_ms is never hedged', async () => {
    const { router, calls, fireHedge } = setup({}, { hedge: ', hedge_after_ms: 50' });
    const result = await router.chat({ meta: meta(), messages });
    fireHedge();
    expect(result.target).toBe('local_a');
    expect(calls.map((c) => c.target)).toEqual(['local_a']);
  });

  it('streaming: only the winner’s pieces reach the caller', async () => {
    const { router, fireHedge } = setup({ local_a: silentUntilAborted }, { hedge: ', hedge_after_ms: 50' });
    const pieces: string[] = [];
    const pending = router.chat({ meta: meta(), messages, onDelta: (text, target) => pieces.push(`${target}:${text}`) });
    await settle();
    fireHedge();
    await pending;
    expect(pieces).toEqual(['cloud:from cloud']);
  });

  it('sensitive work hedges to local targets only, and not at all when no other local target may serve', async () => {
    const first = setup({ local_a: silentUntilAborted }, { hedge: ', hedge_after_ms: 50' });
    const pending = first.router.chat({ meta: meta({ sensitivity: 'sensitive' }), messages });
    await settle();
    first.fireHedge();
    expect((await pending).target).toBe('local_b');
    expect(first.calls.map((c) => c.target)).toEqual(['local_a', 'local_b']);

    const slowPrimary = held('from local_a');
    const second = setup({ local_a: slowPrimary.behaviour }, { hedge: ', hedge_after_ms: 50' });
    second.router.drain('local_b');
    const call = second.router.chat({ meta: meta({ sensitivity: 'sensitive' }), messages });
    await settle();
    second.fireHedge();
    await settle();
    slowPrimary.release();
    expect((await call).target).toBe('local_a');
    expect(second.calls.map((c) => c.target)).toEqual(['local_a']);
  });

  it('without hedge_after_ms no hedge timer is ever set', async () => {
    const scheduled: number[] = [];
    const { router } = setup({});
    (router as unknown as { timer: ScheduleTimer }).timer = (ms) => {
      scheduled.push(ms);
      return () => undefined;
    };
    await router.chat({ meta: meta(), messages });
    expect(scheduled).toEqual([]);
  });

  it('rejects hedge_after_ms at or above the rule’s total timeout, naming the path', () => {
    const text = `
router:
  timeouts: {local_ms: 2000}
  targets:${TARGETS}
  routes:
    - {name: main, when: {all_else: true}, targets: [local_a, cloud], hedge_after_ms: 2000}
`;
    let error: unknown;
    try {
      parseRouterConfig(text, 'conf/router.yaml');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RouterConfigError);
    expect((error as RouterConfigError).issues).toEqual([
      { path: 'router.routes.0.hedge_after_ms', message: expect.stringMatching(/2000 ms is not below the rule's total timeout \(2000 ms\)/) },
    ]);
    expect(() => parseRouterConfig(text.replace('hedge_after_ms: 2000', 'hedge_after_ms: 1999'), 'x')).not.toThrow();
    // A weighted split's targets count the same way.
    const split = text.replace('targets: [local_a, cloud]', 'targets: [{name: local_a, weight: 90}, {name: cloud, weight: 10}]');
    expect(() => parseRouterConfig(split, 'x')).toThrow(/routes\.0\.hedge_after_ms/);
  });
});

describe('Router coalescing (router.coalescing)', () => {
  const ON = '\n  coalescing: {enabled: true}';

  it('N identical concurrent temperature-0 calls make one upstream call, and every caller gets the answer', async () => {
    const upstream = held('shared answer');
    const { router, calls, events } = setup({ local_a: upstream.behaviour }, { extra: ON });
    const pending = Array.from({ length: 5 }, () => router.chat({ meta: meta(), messages, temperature: 0 }));
    await settle();
    upstream.release();
    const results = await Promise.all(pending);
    expect(calls).toHaveLength(1);
    expect(results.map((r) => r.content)).toEqual(Array(5).fill('shared answer'));
    expect(results.filter((r) => r.coalesced)).toHaveLength(4);
    expect(results.filter((r) => r.coalesced).every((r) => r.costUsd === 0)).toBe(true);
    expect(events).toHaveLength(1);
    expect(router.coalescingStats()).toEqual({ leaders: 1, followers: 4 });
  });

  it('a failure reaches every caller, and each one’s failover goes on from there (again shared)', async () => {
    const failing = held('never');
    const { router, calls } = setup({ local_a: (call) => failing.behaviour(call).then(() => serverError(call)) }, { extra: ON });
    const pending = Array.from({ length: 4 }, () => router.chat({ meta: meta(), messages, temperature: 0 }));
    await settle();
    failing.release();
    const results = await Promise.all(pending);
    expect(calls.map((c) => c.target)).toEqual(['local_a', 'cloud']);
    for (const result of results) {
      expect(result.target).toBe('cloud');
      expect(result.attempts.map((a) => [a.target, a.outcome])).toEqual([
        ['local_a', 'error'],
        ['cloud', 'ok'],
      ]);
    }
  });

  it('non-deterministic, streaming or different calls are not shared; nor is anything when coalescing is off', async () => {
    const upstream = held('x');
    const { router, calls } = setup({ local_a: upstream.behaviour }, { extra: ON });
    const pending = [
      router.chat({ meta: meta(), messages, temperature: 0.7 }),
      router.chat({ meta: meta(), messages, temperature: 0.7 }),
      router.chat({ meta: meta(), messages, temperature: 0, onDelta: () => undefined }),
      router.chat({ meta: meta(), messages: [{ role: 'user', content: 'other' }], temperature: 0 }),
      router.chat({ meta: meta(), messages, temperature: 0, context: { tenantId: 't1' } }),
      router.chat({ meta: meta(), messages, temperature: 0, context: { tenantId: 't2' } }),
    ];
    await settle();
    upstream.release();
    await Promise.all(pending);
    expect(calls).toHaveLength(6);

    const off = held('y');
    const plain = setup({ local_a: off.behaviour });
    const both = [plain.router.chat({ meta: meta(), messages, temperature: 0 }), plain.router.chat({ meta: meta(), messages, temperature: 0 })];
    await settle();
    off.release();
    await Promise.all(both);
    expect(plain.calls).toHaveLength(2);
  });

  it('a caller that aborts leaves the shared call running for the others', async () => {
    const upstream = held('for the rest');
    const { router, calls } = setup({ local_a: upstream.behaviour }, { extra: ON });
    const controller = new AbortController();
    const leaving = router.chat({ meta: meta(), messages, temperature: 0, signal: controller.signal });
    const staying = router.chat({ meta: meta(), messages, temperature: 0 });
    await settle();
    controller.abort();
    await expect(leaving).rejects.toThrow(/aborted/);
    expect(calls[0]!.signal.aborted).toBe(false);
    upstream.release();
    expect((await staying).content).toBe('for the rest');
  });
});

describe('Router "is it me or them" (router.network_check)', () => {
  const refused: Behaviour = (call) => Promise.reject(new APIConnectionError({ message: `connect ECONNREFUSED`, cause: new Error(String(call.maxTokens)) }));
  const CHECK = `
  network_check: {known_good_url: "http://known-good.internal/healthz", window_ms: 10000, recheck_ms: 5000}
  health: {retry_after_ms: 60000}
  breaker: {consecutive_failures: 3}`;

  it('every target refusing and the known-good endpoint failing too: one alert, no breaker opened, no health lost; back at once with the network', async () => {
    let reachable = false;
    const checks: string[] = [];
    const behaviours: Record<string, Behaviour> = { local_a: refused, local_b: refused, cloud: refused };
    const { router, fireTimers } = setup(behaviours, {
      extra: CHECK,
      knownGood: () => {
        checks.push(reachable ? 'up' : 'down');
        return Promise.resolve(reachable);
      },
    });
    for (let i = 0; i < 6; i += 1) await expect(router.chat({ meta: meta(), messages })).rejects.toThrow(/failed after/);
    await settle();
    expect(checks).toEqual(['down']);
    const status = router.networkStatus();
    expect(status).toMatchObject({ state: 'local_fault', alerts: 1, knownGood: 'http://known-good.internal/healthz' });
    expect(status.banner).toMatch(/fault is on our side/);
    for (const target of router.snapshot()) expect({ name: target.name, breaker: target.breaker, score: target.score, share: target.share }).toEqual({ name: target.name, breaker: 'closed', score: 100, share: 100 });

    // Still down at the re-check: still one alert.
    fireTimers();
    await settle();
    expect(router.networkStatus()).toMatchObject({ state: 'local_fault', alerts: 1 });
    // The network is back: the next re-check clears it, and the first target takes traffic at once (no ramp).
    reachable = true;
    behaviours.local_a = answer('back');
    fireTimers();
    await settle();
    expect(router.networkStatus()).toMatchObject({ state: 'ok', banner: null });
    expect((await router.chat({ meta: meta(), messages })).target).toBe('local_a');
  });

  it('the known-good endpoint answering: the targets are really down and are charged as usual', async () => {
    const { router } = setup({ local_a: refused, local_b: refused, cloud: refused }, { extra: CHECK, knownGood: () => Promise.resolve(true) });
    for (let i = 0; i < 3; i += 1) await expect(router.chat({ meta: meta(), messages })).rejects.toThrow();
    await settle();
    expect(router.networkStatus()).toMatchObject({ state: 'ok', alerts: 0 });
    expect(router.snapshot().every((t) => t.score < 100)).toBe(true);
  });

  it('without a known_good_url every connect failure is charged at once and nothing is checked', async () => {
    const checks: number[] = [];
    const { router } = setup({ local_a: refused, local_b: refused, cloud: refused }, { knownGood: () => (checks.push(1), Promise.resolve(false)) });
    for (let i = 0; i < 3; i += 1) await expect(router.chat({ meta: meta(), messages })).rejects.toThrow();
    expect(checks).toEqual([]);
    expect(router.snapshot().find((t) => t.name === 'local_a')!.score).toBe(0);
  });
});
