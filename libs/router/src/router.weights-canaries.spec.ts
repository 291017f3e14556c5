import { Writable } from 'node:stream';
import { RequestMetaSchema } from '@switchyard/contracts';
import { createLogger } from '@switchyard/observability';
import type { CanaryCaseResult } from './canary/canary-verdict';
import { FakeClock } from './clock';
import { parseRouterConfig } from './config/router-config.loader';
import type { ChatProvider, ProviderCall, ProviderResult } from './providers/chat-provider';
import { Router } from './router';

const TARGETS = `
    - {name: primary, type: local, endpoint: "http://127.0.0.1:1/v1", model: a, max_concurrency: 100, context_window: 10000, cost_per_1k_tokens: {input: 0.0001, output: 0.0001}}
    - {name: candidate, type: local, endpoint: "http://127.0.0.1:2/v1", model: b, max_concurrency: 100, context_window: 10000, cost_per_1k_tokens: {input: 0.0001, output: 0.0001}}`;

const CANARIES = `
  canaries:
    interval_s: 60
    rounds_to_fail: 1
    cases:
      - {name: order, language: en, prompt: "order ORD-1?", expect: {contains: ORD-1}}`;

function setup(options: { dynamic?: string; canaries?: boolean; random?: () => number } = {}) {
  const clock = new FakeClock();
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const failing = new Set<string>();
  const config = parseRouterConfig(
    `
router:
  recovery: {switch_cooldown_ms: 60000, hold_ms: 10000, steps: [10, 50, 100], max_step_points: 100}
  # Latency as measured on this machine is left out of the score: the figures below stay exact.
  dynamic_weights: {enabled: true, min_requests: 10, latency_penalty: 0, ${options.dynamic ?? ''}}
  # Health and breaker out of the way: the failing target keeps its traffic, so only the weights react.
  health: {threshold: 0, window_ms: 3600000}
  breaker: {consecutive_failures: 1000000, min_volume: 1000000}
  targets:${TARGETS}
  routes:
    - {name: split, when: {all_else: true}, targets: [{name: primary, weight: 90}, {name: candidate, weight: 10}]}
${options.canaries ? CANARIES : ''}`,
    'weights-canaries.spec',
  );
  const router = new Router({
    config,
    secrets: () => undefined,
    logger: createLogger('weights-spec', 'info', destination),
    clock,
    random: options.random ?? Math.random,
    providerFactory: (target) =>
      ({
        target,
        complete: (call: ProviderCall): Promise<ProviderResult> => {
          call.onConnected?.();
          if (failing.has(target.name)) return Promise.reject(Object.assign(new Error('boom'), { status: 500 }));
          call.onFirstToken?.();
          return Promise.resolve({ content: 'ok', model: 'm', usage: { inputTokens: 1, outputTokens: 1 }, firstTokenMs: 5 });
        },
      }) as ChatProvider,
  });
  return { router, clock, lines, failing };
}

const meta = RequestMetaSchema.parse({});
const chat = (router: Router, jobId?: string) =>
  router.chat({ meta, messages: [{ role: 'user', content: 'hi' }], ...(jobId === undefined ? {} : { context: { jobId } }) });

const wrong: CanaryCaseResult[] = [{ case: 'order', language: 'en', passed: false, expected: 'contains "ORD-1"', excerpt: 'ORD-6' }];
const right: CanaryCaseResult[] = [{ case: 'order', language: 'en', passed: true, expected: 'contains "ORD-1"', excerpt: 'ORD-1' }];

describe('Router: weighted splits', () => {
  it('keeps one job on one target of the split (the job id is the sticky key)', async () => {
    const { router } = setup();
    for (let job = 0; job < 30; job += 1) {
      const targets = new Set<string>();
      for (let call = 0; call < 4; call += 1) targets.add((await chat(router, `job-${job}`)).target);
      expect(targets.size).toBe(1);
    }
  });

  it('explains the split with its weights and shares', () => {
    const { router } = setup();
    expect(router.explain(meta).split).toEqual({
      rule: 'split',
      sticky: false,
      targets: [
        { target: 'primary', weight: 90, share: 90, eligible: true },
        { target: 'candidate', weight: 10, share: 10, eligible: true },
      ],
    });
  });
});

describe('Router: business canaries', () => {
  it('a target failing its canaries loses its share, shows the failing case, and climbs the recovery ramp after a passing round', async () => {
    const { router, clock, lines } = setup({ canaries: true, random: () => 0.05 });
    // random 0.05 → every unkeyed call draws `primary` first (it has 90 % of the split).
    expect((await chat(router)).target).toBe('primary');

    router.recordCanaryRound('primary', wrong);
    expect((await chat(router)).target).toBe('candidate');
    const explained = router.explain(meta);
    expect(explained.candidates[0]).toMatchObject({ target: 'primary', eligible: false, reason: 'canary_failing' });
    expect(explained.split?.targets.map((t) => [t.share, t.reason])).toEqual([
      [0, 'canary_failing'],
      [100, undefined],
    ]);
    const snapshot = router.snapshot().find((t) => t.name === 'primary')!;
    expect(snapshot.state).toBe('unavailable');
    expect(snapshot.canary).toMatchObject({ failing: true, failures: [{ case: 'order', language: 'en', expected: 'contains "ORD-1"', excerpt: 'ORD-6' }] });
    expect(lines.find((line) => line.event === 'canary_failing')).toMatchObject({ target: 'primary', failures: [{ case: 'order' }] });

    // Minutes later the canaries pass again: the ramp starts at its first step (10 %), not after the switch cooldown.
    clock.advance(300_000);
    router.recordCanaryRound('primary', right);
    expect(router.snapshot().find((t) => t.name === 'primary')).toMatchObject({ share: 10, canary: { failing: false } });
    // The draw 0.05 is under the 10 % share: it takes the call.
    expect((await chat(router)).target).toBe('primary');
    clock.advance(10_000);
    expect(router.snapshot().find((t) => t.name === 'primary')!.share).toBe(50);
    expect(lines.find((line) => line.event === 'canary_recovered')).toMatchObject({ target: 'primary' });
  });

  it('a round without answers changes nothing, and a config without canaries clears the verdict', () => {
    const { router } = setup({ canaries: true });
    router.recordCanaryRound('primary', [{ case: 'order', language: 'en', error: 'HTTP 503' }]);
    expect(router.snapshot()[0]!.canary).toMatchObject({ failing: false, checkedAt: null, errors: [{ case: 'order', error: 'HTTP 503' }] });
    router.recordCanaryRound('primary', wrong);
    expect(router.snapshot()[0]!.canary!.failing).toBe(true);
    router.reload(setup().router.config);
    expect(router.snapshot()[0]!.canary).toBeNull();
    expect(router.explain(meta).candidates.every((c) => c.reason !== 'canary_failing')).toBe(true);
  });
});

describe('Router: dynamic weights', () => {
  it('moves a failing target’s weight by at most 15 points per 5 minutes, logs each change and shows it in /admin/targets', async () => {
    const { router, clock, lines, failing } = setup();
    // Enough traffic on both: job ids spread over the split.
    for (let job = 0; job < 200; job += 1) await chat(router, `job-${job}`).catch(() => undefined);
    failing.add('primary');
    for (let job = 200; job < 400; job += 1) await chat(router, `job-${job}`).catch(() => undefined);

    const first = router.rebalanceWeights();
    expect(first.map((c) => [c.target, c.from, c.to])).toEqual([
      ['primary', 90, 75],
      ['candidate', 10, 25],
    ]);
    expect(lines.filter((line) => line.event === 'weight_changed')).toEqual([
      expect.objectContaining({ rule: 'split', target: 'primary', from: 90, to: 75, msg: 'routing decision: dynamic weight changed' }),
      expect.objectContaining({ rule: 'split', target: 'candidate', from: 10, to: 25 }),
    ]);
    expect(router.snapshot().find((t) => t.name === 'primary')!.weights).toEqual([{ rule: 'split', configured: 90, current: 75, changedAt: clock.now() }]);
    expect(router.explain(meta).split?.targets.map((t) => t.weight)).toEqual([75, 25]);

    // Not again within 5 minutes…
    clock.advance(299_000);
    expect(router.rebalanceWeights()).toEqual([]);
    // …then one more step, which reaches the desired weight (about 72: the primary's window holds ~30 % successes).
    clock.advance(1_000);
    const [primary, candidate] = router.rebalanceWeights();
    expect(primary!.to).toBe(primary!.desired);
    expect(primary!.to).toBeGreaterThan(60);
    expect(primary!.to).toBeLessThan(75);
    expect(primary!.to + candidate!.to).toBeCloseTo(100, 2);
  });

  it('keeps the moved weights over a reload that leaves the split as it was', async () => {
    const { router, failing } = setup({ dynamic: 'max_step_points: 5' });
    for (let job = 0; job < 100; job += 1) await chat(router, `job-${job}`).catch(() => undefined);
    failing.add('primary');
    for (let job = 100; job < 300; job += 1) await chat(router, `job-${job}`).catch(() => undefined);
    expect(router.rebalanceWeights().map((c) => c.to)).toEqual([85, 15]);
    router.reload(router.config);
    expect(router.snapshot()[0]!.weights[0]!.current).toBe(85);
  });
});
