import { APIError } from 'openai';
import { RequestMetaSchema, type RequestMetaInput } from '@switchyard/contracts';
import { Writable } from 'node:stream';
import { MetricsRegistry, createLogger, parsePrometheusText, sampleValue, type Logger } from '@switchyard/observability';
import { InMemoryRetryBudgetStore } from './budget/retry-budget';
import { RetryBudgetSpentError } from './budget/retry-budget-spent.error';
import { ContextWindowExceededError } from './calls/context-window.error';
import { RouterCallError } from './calls/router-call.error';
import { FakeClock } from './clock';
import { parseRouterConfig } from './config/router-config.loader';
import { UpstreamMetricsObserver } from './ledger/upstream-metrics.observer';
import type { AttemptEvent, CallObserver } from './observe/call-observer';
import type { ChatProvider, ProviderCall, ProviderResult } from './providers/chat-provider';
import { Router } from './router';
import { NoEligibleTargetError } from './routing/no-eligible-target.error';

type Behaviour = (call: ProviderCall) => Promise<ProviderResult>;

const ok =
  (content = '{"conclusion":"ok"}', firstTokenMs = 50): Behaviour =>
  (call) => {
    call.onConnected?.();
    call.onFirstToken?.();
    return Promise.resolve({ content, model: 'm', usage: { inputTokens: 10, outputTokens: 5 }, firstTokenMs });
  };
const status =
  (code: number, headers: Record<string, string> = {}): Behaviour =>
  () =>
    Promise.reject(APIError.generate(code, { error: { message: `status ${code}` } }, `status ${code}`, new Headers(headers)));
/** Connects, then never a token: only the router's first-token timeout ends it. */
const noFirstToken: Behaviour = (call) =>
  new Promise((_, reject) => {
    call.onConnected?.();
    call.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
  });

const TARGETS = `
    - {name: local_a, type: local, endpoint: "http://127.0.0.1:1/v1", model: a, max_concurrency: 4, context_window: 1000, cost_per_1k_tokens: {input: 0.0001, output: 0.0001}}
    - {name: local_b, type: local, endpoint: "http://127.0.0.1:2/v1", model: b, max_concurrency: 4, context_window: 1000, cost_per_1k_tokens: {input: 0.0004, output: 0.0004}, first_token_timeout_ms: 100}
    - {name: cloud, type: cloud, endpoint: "http://127.0.0.1:3/v1", model: c, max_concurrency: 50, context_window: 128000, cost_per_1k_tokens: {input: 0.002, output: 0.008}}`;

function setup(behaviours: Record<string, Behaviour>, extra = '', logger: Logger = createLogger('resilience-spec', 'silent'), observers: CallObserver[] = []) {
  const clock = new FakeClock();
  const calls: string[] = [];
  const events: AttemptEvent[] = [];
  const sleeps: number[] = [];
  const config = parseRouterConfig(
    `
router:
  max_attempts_per_call: 3
  retry_budget_per_job: 4
  recovery: {switch_cooldown_ms: 0, hold_ms: 1000, max_step_points: 100}${extra}
  targets:${TARGETS}
  routes:
    - {name: sensitive, when: {sensitivity: sensitive}, targets: [local_a, local_b], priority: 100}
    - {name: main, when: {all_else: true}, targets: [local_a, local_b, cloud], priority: 1}
`,
    'resilience.spec',
  );
  const router = new Router({
    config,
    secrets: () => undefined,
    logger,
    clock,
    random: () => 0.5,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    retryBudget: new InMemoryRetryBudgetStore(clock),
    observers: [{ onAttempt: (event) => events.push(event) }, ...observers],
    providerFactory: (target) =>
      ({
        target,
        complete: (call: ProviderCall) => {
          calls.push(target.name);
          return (behaviours[target.name] ?? ok())(call);
        },
      }) as ChatProvider,
  });
  return { router, clock, calls, events, sleeps, config };
}

const meta = (input: RequestMetaInput = {}) => RequestMetaSchema.parse(input);
const messages = [{ role: 'user' as const, content: 'hello' }];
const count = (list: string[], name: string) => list.filter((n) => n === name).length;

/** A logger at debug whose JSON lines land in `lines`. */
function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('resilience-spec', 'debug', destination), lines };
}

describe('Router decision and transition logs', () => {
  it('logs every decision (debug when routine, info on failover with its reason), breaker transitions and a spent retry budget', async () => {
    const { logger, lines } = capturingLogger();
    const behaviours: Record<string, Behaviour> = { local_a: status(500) };
    const { router, clock } = setup(behaviours, '\n  health: {threshold: 0}', logger);
    await router.chat({ meta: meta(), messages });
    const decisions = lines.filter((l) => String(l.msg).startsWith('routing decision'));
    expect(decisions[0]).toEqual(expect.objectContaining({ level: 'debug', msg: 'routing decision', target: 'local_a', rule: 'main', attempt: 1 }));
    expect(decisions[1]).toEqual(
      expect.objectContaining({ level: 'info', msg: 'routing decision: failover to another target', target: 'local_b', failover_from: 'local_a', failover_reason: 'server', attempt: 2 }),
    );

    for (let i = 0; i < 9; i++) await router.chat({ meta: meta(), messages });
    expect(lines.filter((l) => l.msg === 'breaker opened')).toEqual([expect.objectContaining({ level: 'warn', target: 'local_a', breaker: 'open', reason: expect.any(String) })]);
    behaviours.local_a = ok();
    clock.advance(30_000);
    // Half-open trial calls (the others excluded, so they go to local_a) until enough succeed to close it.
    for (let i = 0; i < 5; i++) await router.chat({ meta: meta(), messages, excludeTargets: ['local_b', 'cloud'] });
    expect(lines.filter((l) => l.msg === 'breaker closed')).toEqual([expect.objectContaining({ level: 'info', target: 'local_a', breaker: 'closed' })]);
  });

  it('logs a spent retry budget with the job and its limit', async () => {
    const { logger, lines } = capturingLogger();
    const storm = status(429, { 'retry-after': '1' });
    const { router, clock } = setup({ local_a: storm, local_b: storm, cloud: storm }, '', logger);
    for (let i = 0; i < 2; i++) {
      await router.chat({ meta: meta(), messages, context: { jobId: 'job-1', tenantId: 't' } }).catch(() => undefined);
      clock.advance(1_000);
    }
    expect(lines.filter((l) => String(l.msg).startsWith('retry budget of the job spent'))).toEqual([expect.objectContaining({ level: 'info', job_id: 'job-1', limit: 4 })]);
    expect(lines.filter((l) => String(l.msg).startsWith('retry budget of the job exhausted'))).toEqual([
      expect.objectContaining({ level: 'warn', job_id: 'job-1', tenant_id: 't', limit: 4 }),
    ]);
  });

  it('counts a job whose retry budget runs out once in switchyard_retry_budget_exhausted_total, however many calls fail after', async () => {
    const registry = new MetricsRegistry();
    const storm = status(429, { 'retry-after': '1' });
    const { router, clock } = setup({ local_a: storm, local_b: storm, cloud: storm }, '', undefined, [new UpstreamMetricsObserver(registry)]);
    const exhausted = async () => sampleValue(parsePrometheusText(await registry.render()), 'switchyard_retry_budget_exhausted_total', { tenant: 't' }) ?? 0;
    // Call 1 spends 3 of the job's 4; the budget runs out in call 2; calls 3 to 5 are trials outside it.
    const call = async (jobId: string) => {
      await router.chat({ meta: meta(), messages, context: { jobId, tenantId: 't' } }).catch(() => undefined);
      clock.advance(1_000);
    };
    await call('job-1');
    expect(await exhausted()).toBe(0);
    await call('job-1');
    expect(await exhausted()).toBe(1);
    for (let i = 0; i < 3; i++) await call('job-1');
    expect(await exhausted()).toBe(1);
    await call('job-2');
    await call('job-2');
    expect(await exhausted()).toBe(2);
  });
});

describe('Router resilience', () => {
  it('stops sending to a target failing with 500s (health, then breaker) and serves every call elsewhere', async () => {
    const { router, calls } = setup({ local_a: status(500) });
    for (let i = 0; i < 30; i++) {
      const result = await router.chat({ meta: meta(), messages });
      expect(result.target).toBe('local_b');
    }
    // Three consecutive server errors take its score to 0; it is skipped until its retry time.
    expect(count(calls, 'local_a')).toBe(3);
  });

  it('gives an unhealthy target one trial after retry_after_ms, and takes it back when it succeeds', async () => {
    const behaviours: Record<string, Behaviour> = { local_a: status(500) };
    const { router, clock, calls } = setup(behaviours);
    for (let i = 0; i < 3; i++) await router.chat({ meta: meta(), messages });
    behaviours.local_a = ok();
    clock.advance(30_000);
    const result = await router.chat({ meta: meta(), messages });
    expect(result.target).toBe('local_a');
    expect(count(calls, 'local_a')).toBe(4);
  });

  it('opens the breaker after 10 consecutive failures and half-opens after the cooldown', async () => {
    const { router, clock } = setup({ local_a: status(500) }, '\n  health: {threshold: 0}');
    for (let i = 0; i < 10; i++) await router.chat({ meta: meta(), messages });
    expect(router.snapshot().find((t) => t.name === 'local_a')).toMatchObject({ breaker: 'open', state: 'unavailable' });
    expect(router.explain(meta()).candidates[0]).toMatchObject({ target: 'local_a', reason: 'breaker_open' });
    clock.advance(30_000);
    expect(router.snapshot().find((t) => t.name === 'local_a')!.breaker).toBe('half_open');
  });

  it('keeps the whole job within its retry budget in a 429 storm, across calls; once spent, one trial attempt per call', async () => {
    const storm = status(429, { 'retry-after': '1' });
    const { router, calls, sleeps, clock } = setup({ local_a: storm, local_b: storm, cloud: storm });
    const context = { jobId: 'job-1', tenantId: 't' };
    const errors: unknown[] = [];
    for (let i = 0; i < 5; i++) {
      await router.chat({ meta: meta(), messages, context }).catch((error: unknown) => errors.push(error));
      clock.advance(1_000); // past every Retry-After: only the budget stops the next call
    }
    // Call 1: 3 attempts; call 2: 1 more, the budget of 4 is spent; calls 3 to 5: one trial each.
    expect(calls).toHaveLength(4 + 3);
    expect(errors[0]).not.toBeInstanceOf(RetryBudgetSpentError);
    expect(errors.slice(1).every((e) => e instanceof RetryBudgetSpentError && e.code === 'retry_budget_spent' && e.waitable)).toBe(true);
    expect((errors[1] as Error).message).toMatch(/retry budget of 4 failed upstream attempts for job job-1 is spent$/);
    expect((errors.at(-1) as RetryBudgetSpentError).attempts).toHaveLength(1);
    expect((errors.at(-1) as Error).message).toMatch(/is spent; its trial attempt outside the budget failed/);
    // 429 → a short exponential backoff with jitter before the next target.
    expect(sleeps[0]).toBe(1000 + 250);
    expect(sleeps[1]).toBe(2000 + 250);
  });

  it('grows the retry budget with the job: base plus retry_budget_per_task per task', async () => {
    const storm = status(429, { 'retry-after': '1' });
    const run = async (jobTaskCount: number | undefined) => {
      const { router, calls, clock } = setup({ local_a: storm, local_b: storm, cloud: storm }, '\n  retry_budget_per_task: 0.5');
      const context = { jobId: 'job-sized', tenantId: 't', ...(jobTaskCount === undefined ? {} : { jobTaskCount }) };
      let error: unknown;
      // Calls until the budget stops them (the first RetryBudgetSpentError), at most 20.
      for (let i = 0; i < 20 && !(error instanceof RetryBudgetSpentError); i++) {
        error = await router.chat({ meta: meta(), messages, context }).catch((e: unknown) => e);
        clock.advance(1_000);
      }
      return { calls: calls.length, limit: (error as RetryBudgetSpentError).limit };
    };
    expect(await run(undefined)).toEqual({ calls: 4, limit: 4 });
    expect(await run(20)).toEqual({ calls: 14, limit: 4 + 10 });
  });

  it('a trial attempt that succeeds answers the call, though the budget stays spent', async () => {
    let failing = true;
    const flaky: Behaviour = (call) => (failing ? status(500)(call) : ok()(call));
    const { router, calls } = setup({ local_a: flaky, local_b: flaky, cloud: flaky });
    const context = { jobId: 'job-2', tenantId: 't' };
    for (let i = 0; i < 2; i++) await router.chat({ meta: meta(), messages, context }).catch(() => undefined);
    expect(calls).toHaveLength(4);
    failing = false;
    const result = await router.chat({ meta: meta(), messages, context });
    expect(result.attempts).toEqual([expect.objectContaining({ outcome: 'ok' })]);
  });

  it('treats a 503 "model is loading" as a cold start: the call moves on, no health lost, no budget spent, the target waits for a probe', async () => {
    const loading: Behaviour = () =>
      Promise.reject(APIError.generate(503, { error: { message: 'Model local_a is currently loading' } }, 'Model local_a is currently loading', new Headers()));
    const { router, calls } = setup({ local_a: loading });
    const context = { jobId: 'job-cold', tenantId: 't' };
    const result = await router.chat({ meta: meta(), messages, context });
    expect(result.target).toBe('local_b');
    expect(result.attempts.map((a) => [a.target, a.status])).toEqual([
      ['local_a', 503],
      ['local_b', undefined],
    ]);
    expect(router.snapshot().find((t) => t.name === 'local_a')).toMatchObject({ score: 100, state: 'cold_start' });
    // Until a probe answers, no more calls go to it.
    for (let i = 0; i < 3; i++) await router.chat({ meta: meta(), messages, context });
    expect(count(calls, 'local_a')).toBe(1);
    router.recordProbe('local_a', { ok: true, latencyMs: 1, kind: 'liveness' });
    expect(router.snapshot().find((t) => t.name === 'local_a')!.state).not.toBe('cold_start');
  });

  it('spends no retry budget on a cold start', async () => {
    const loading: Behaviour = () => Promise.reject(APIError.generate(503, { error: { message: 'Model is loading' } }, 'Model is loading', new Headers()));
    const { router } = setup({ local_a: loading, local_b: status(500), cloud: status(500) });
    const context = { jobId: 'job-cold-budget', tenantId: 't' };
    // Budget 4. Call 1: local_a loading (free), local_b and cloud fail (2 spent).
    const first = (await router.chat({ meta: meta(), messages, context }).catch((e: unknown) => e)) as RouterCallError;
    expect(first.attempts.map((a) => a.target)).toEqual(['local_a', 'local_b', 'cloud']);
    // Call 2: two more failures fit only if the cold start cost nothing (4 spent).
    const second = (await router.chat({ meta: meta(), messages, context }).catch((e: unknown) => e)) as RouterCallError;
    expect(second.attempts.map((a) => a.target)).toEqual(['local_b', 'cloud']);
    const third = (await router.chat({ meta: meta(), messages, context }).catch((e: unknown) => e)) as RouterCallError;
    expect(third.message).toMatch(/retry budget of 4 failed upstream attempts for job job-cold-budget is spent/);
  });

  it('cools a rate-limited target down for its Retry-After', async () => {
    const behaviours: Record<string, Behaviour> = { local_a: status(429, { 'retry-after': '5' }) };
    const { router, clock } = setup(behaviours);
    await router.chat({ meta: meta(), messages });
    behaviours.local_a = ok();
    expect(router.explain(meta()).candidates[0]).toMatchObject({ target: 'local_a', reason: 'rate_limited' });
    clock.advance(5_000);
    expect(router.explain(meta()).chosen).toBe('local_a');
  });

  it('moves on when the first token does not come in time', async () => {
    const { router } = setup({ local_a: status(500), local_b: noFirstToken });
    const result = await router.chat({ meta: meta(), messages });
    expect(result.target).toBe('cloud');
    expect(result.attempts[1]).toMatchObject({ target: 'local_b', errorClass: 'timeout', message: 'no first token within 100 ms' });
  });

  it('counts a JSON-mode reply that is not JSON as bad output of its target', async () => {
    const { router, events } = setup({ local_a: ok('Sure! here is what I found') });
    const result = await router.chat({ meta: meta(), messages, jsonMode: true });
    expect(result.target).toBe('local_a');
    expect(events[0]).toMatchObject({ outcome: 'bad_output', firstTokenMs: 50 });
    expect(router.snapshot()[0]!.score).toBe(85);
    for (let i = 0; i < 4; i++) await router.chat({ meta: meta(), messages, jsonMode: true });
    expect(router.explain(meta()).candidates[0]).toMatchObject({ target: 'local_a', reason: 'unhealthy' });
  });

  it('reportBadOutput counts against the target', () => {
    const { router } = setup({});
    router.reportBadOutput('local_a');
    expect(router.snapshot()[0]!.score).toBe(85);
  });

  it('spills non-sensitive work off an overloaded local target; sensitive work stays local', async () => {
    const { router } = setup({ local_a: ok('{}', 2000) });
    await router.chat({ meta: meta(), messages });
    expect(router.explain(meta()).candidates[0]).toMatchObject({ target: 'local_a', reason: 'overloaded' });
    expect(router.explain(meta({ sensitivity: 'sensitive' })).chosen).toBe('local_a');
  });

  it('drain, enable and force-primary, never a sensitive call to the cloud', async () => {
    const { router } = setup({});
    router.drain('local_a');
    expect(router.explain(meta()).candidates[0]).toMatchObject({ target: 'local_a', reason: 'drained' });
    expect(router.snapshot()[0]).toMatchObject({ state: 'drained', drained: true });
    router.enable('local_a');
    expect(router.explain(meta()).chosen).toBe('local_a');
    router.forcePrimary('cloud');
    expect(router.explain(meta())).toMatchObject({ chosen: 'cloud', rule: '(forced primary)' });
    const sensitive = router.explain(meta({ sensitivity: 'sensitive' }));
    expect(sensitive.chosen).toBe('local_a');
    expect(sensitive.candidates[0]).toMatchObject({ target: 'cloud', reason: 'sensitive_requires_local' });
    router.forcePrimary(null);
    expect(router.explain(meta()).chosen).toBe('local_a');
    expect(() => router.drain('nope')).toThrow(/unknown target "nope"; known targets: local_a, local_b, cloud/);
  });

  it('makes a sensitive call wait (NoEligibleTargetError) when both local targets are down', async () => {
    const { router, calls } = setup({ local_a: status(500), local_b: status(500) });
    router.drain('local_a');
    router.drain('local_b');
    await expect(router.chat({ meta: meta({ sensitivity: 'sensitive' }), messages })).rejects.toBeInstanceOf(NoEligibleTargetError);
    expect(calls).toEqual([]);
  });

  it('rejects an input that fits no eligible target, naming the sizes', async () => {
    const { router } = setup({});
    const big = Array.from({ length: 900 }, (_, i) => `word${i}`).join(' ');
    const error = await router.chat({ meta: meta({ sensitivity: 'sensitive' }), messages: [{ role: 'user', content: big }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextWindowExceededError);
    expect((error as Error).message).toMatch(/about \d+ input tokens.*local_a 1000 \(limit 800\), local_b 1000 \(limit 800\)/);
    // Not sensitive: the cloud target's window fits it.
    expect((await router.chat({ meta: meta(), messages: [{ role: 'user', content: big }] })).target).toBe('cloud');
  });

  it('reload keeps the health of targets that still exist', async () => {
    const { router, config } = setup({ local_a: status(500) });
    for (let i = 0; i < 3; i++) await router.chat({ meta: meta(), messages });
    router.reload(config);
    expect(router.snapshot()[0]!.score).toBe(0);
  });

  it('reload applies new breaker and health settings to targets that still exist, keeping what they learned', async () => {
    const { router, clock } = setup({ local_a: status(500) }, '\n  health: {threshold: 0}');
    for (let i = 0; i < 4; i++) await router.chat({ meta: meta(), messages });
    expect(router.snapshot()[0]).toMatchObject({ name: 'local_a', breaker: 'closed' });
    router.reload(
      parseRouterConfig(
        `
router:
  max_attempts_per_call: 3
  retry_budget_per_job: 4
  health: {threshold: 0}
  breaker: {consecutive_failures: 5, cooldown_ms: 2000}
  recovery: {switch_cooldown_ms: 0, hold_ms: 1000, max_step_points: 100}
  targets:${TARGETS}
  routes:
    - {name: main, when: {all_else: true}, targets: [local_a, local_b, cloud], priority: 1}
`,
        'resilience.spec (reloaded)',
      ),
    );
    // The fifth failure of the streak that began before the reload opens the breaker under the new threshold.
    await router.chat({ meta: meta(), messages });
    expect(router.snapshot()[0]).toMatchObject({ breaker: 'open' });
    clock.advance(2_000);
    expect(router.snapshot()[0]).toMatchObject({ breaker: 'half_open' });
  });
});

describe('Router probes', () => {
  it('keeps work away from targets whose model is still loading: sensitive work finds no target (it waits), then flows once a probe answers', async () => {
    const { router, calls } = setup({});
    router.recordProbe('local_a', { ok: false, coldStart: true, latencyMs: 1 });
    router.recordProbe('local_b', { ok: false, coldStart: true, latencyMs: 1 });
    const error = await router.chat({ meta: meta({ sensitivity: 'sensitive' }), messages }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoEligibleTargetError);
    const reasons = new Set(router.explain(meta({ sensitivity: 'sensitive' })).candidates.map((c) => `${c.target}: ${c.reason}`));
    expect([...reasons].sort()).toEqual(['cloud: sensitive_requires_local', 'local_a: cold_start', 'local_b: cold_start']);
    expect(calls).toEqual([]);
    // Non-sensitive work goes to the cloud meanwhile; the loading targets are not charged a failure.
    expect((await router.chat({ meta: meta(), messages })).target).toBe('cloud');
    expect(router.snapshot().find((t) => t.name === 'local_a')!.score).toBe(100);
    router.recordProbe('local_a', { ok: true, latencyMs: 1, kind: 'liveness' });
    expect((await router.chat({ meta: meta({ sensitivity: 'sensitive' }), messages })).target).toBe('local_a');
  });

  it('a passing liveness probe does not lift an excluded target; a passing inference probe does; a cold start changes nothing', async () => {
    const { router, clock } = setup({ local_a: status(500) });
    for (let i = 0; i < 3; i++) await router.chat({ meta: meta(), messages });
    router.recordProbe('local_a', { ok: false, coldStart: true, latencyMs: 1 });
    expect(router.snapshot()[0]).toMatchObject({ score: 0, state: 'cold_start' });
    router.recordProbe('local_a', { ok: true, latencyMs: 1, kind: 'liveness' });
    expect(router.explain(meta()).candidates[0]).toMatchObject({ target: 'local_a', reason: 'unhealthy' });
    router.recordProbe('local_a', { ok: true, latencyMs: 1, kind: 'inference' });
    expect(router.snapshot()[0]!.score).toBe(30);
    // Healthy again, but recovering: its share climbs 10 → 30 → 60 → 100 % (hold 1 s here).
    expect(router.explain(meta()).candidates[0]).toMatchObject({ target: 'local_a', reason: 'recovering' });
    expect(router.snapshot()[0]).toMatchObject({ share: 10, state: 'degraded' });
    clock.advance(2_000);
    expect(router.snapshot()[0]!.share).toBe(60);
    expect(router.explain(meta()).chosen).toBe('local_a'); // random() = 0.5 < 60 %
    clock.advance(2_000);
    expect(router.snapshot()[0]!.share).toBe(100);
  });
});
