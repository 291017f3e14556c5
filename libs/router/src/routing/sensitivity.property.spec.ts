import fc from 'fast-check';
import { RequestMetaSchema } from '@switchyard/contracts';
import { createLogger } from '@switchyard/observability';
import { FakeClock } from '../clock';
import { parseRouterConfig } from '../config/router-config.loader';
import type { ChatProvider } from '../providers/chat-provider';
import { Router } from '../router';
import { NoEligibleTargetError } from './no-eligible-target.error';

/**
 * SPEC §3.1 under pressure: whatever the config, the failures, the operator's drains and
 * forced primaries, the exclusions and the policy, a sensitive request never reaches a
 * cloud target — neither in a decision nor on the wire.
 */
const targetArb = fc.record({ cloud: fc.boolean(), quality: fc.integer({ min: 1, max: 10 }) });
const configArb = fc
  .record({
    targets: fc.array(targetArb, { minLength: 1, maxLength: 5 }),
    policy: fc.constantFrom('local_first', 'quality_first', 'latency_first'),
    fallback: fc.boolean(),
    rules: fc.array(
      fc.record({
        sensitivity: fc.constantFrom('sensitive', 'internal', 'public', undefined),
        targets: fc.array(fc.nat(4), { minLength: 1, maxLength: 3 }),
        priority: fc.integer({ min: 0, max: 200 }),
      }),
      { maxLength: 4 },
    ),
    catchAll: fc.nat(4),
  })
  .map((c) => {
    const names = c.targets.map((_, i) => `t${i}`);
    const pick = (i: number) => names[i % names.length]!;
    const targets = c.targets
      .map(
        (t, i) => `
    - {name: t${i}, type: ${t.cloud ? 'cloud' : 'local'}, endpoint: "http://127.0.0.1:1/v1", model: m${i}, max_concurrency: 2, context_window: 32768, cost_per_1k_tokens: {input: 0.001, output: 0.001}, quality: ${t.quality}}`,
      )
      .join('');
    const rules = c.rules
      .map((r, i) => {
        const when = r.sensitivity === undefined ? '{task_type: [chat, extract, reasoning]}' : `{sensitivity: ${r.sensitivity}}`;
        return `
    - {name: r${i}, when: ${when}, targets: [${[...new Set(r.targets.map(pick))].join(', ')}], priority: ${r.priority}}`;
      })
      .join('');
    return {
      yaml: `
router:
  default_policy: ${c.policy}
  fallback_to_any_eligible: ${c.fallback}
  targets:${targets}
  routes:${rules}
    - {name: catch_all, when: {all_else: true}, target: ${pick(c.catchAll)}, priority: 1}
`,
      names,
      cloud: new Set(names.filter((_, i) => c.targets[i]!.cloud)),
    };
  });

const opArb = fc.oneof(
  fc.record({ kind: fc.constant('fail' as const), target: fc.nat(4), failure: fc.constantFrom('network', 'server', 'timeout', 'bad_output', 'rate_limited') }),
  fc.record({ kind: fc.constant('drain' as const), target: fc.nat(4) }),
  fc.record({ kind: fc.constant('enable' as const), target: fc.nat(4) }),
  fc.record({ kind: fc.constant('force' as const), target: fc.option(fc.nat(4)) }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 200_000 }) }),
  fc.record({ kind: fc.constant('call' as const), exclude: fc.array(fc.nat(4), { maxLength: 3 }), failFirst: fc.boolean(), priority: fc.constantFrom('normal', 'high') }),
);

describe('sensitive requests never reach a cloud target (property)', () => {
  it('holds for any config, failure sequence, drain, force-primary and exclusion', async () => {
    await fc.assert(
      fc.asyncProperty(configArb, fc.array(opArb, { maxLength: 25 }), async (config, ops) => {
        const clock = new FakeClock();
        const called: string[] = [];
        let failNext = false;
        const factory = (target: { name: string }): ChatProvider =>
          ({
            target,
            complete: () => {
              called.push(target.name);
              if (failNext) return Promise.reject(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
              return Promise.resolve({ content: '{}', model: 'm' });
            },
          }) as unknown as ChatProvider;
        const router = new Router({
          config: parseRouterConfig(config.yaml, 'property'),
          secrets: () => undefined,
          logger: createLogger('property', 'silent'),
          providerFactory: factory,
          clock,
          random: () => 0.5,
          sleep: () => Promise.resolve(),
        });
        const name = (i: number) => config.names[i % config.names.length]!;
        for (const op of ops) {
          if (op.kind === 'fail') router.recordProbe(name(op.target), { ok: false, failure: op.failure, latencyMs: 1 });
          else if (op.kind === 'drain') router.drain(name(op.target));
          else if (op.kind === 'enable') router.enable(name(op.target));
          else if (op.kind === 'force') router.forcePrimary(op.target === null ? null : name(op.target));
          else if (op.kind === 'advance') clock.advance(op.ms);
          else {
            const meta = RequestMetaSchema.parse({ sensitivity: 'sensitive', priority: op.priority });
            const excludeTargets = op.exclude.map(name);
            try {
              const decision = router.decide(meta, { excludeTargets });
              expect(config.cloud.has(decision.target.name)).toBe(false);
            } catch (error) {
              expect(error).toBeInstanceOf(NoEligibleTargetError);
            }
            failNext = op.failFirst;
            called.length = 0;
            await router.chat({ meta, messages: [{ role: 'user', content: 'secret' }], excludeTargets }).catch(() => undefined);
            for (const target of called) expect(config.cloud.has(target)).toBe(false);
            expect(router.explain(meta).chosen === null || !config.cloud.has(router.explain(meta).chosen!)).toBe(true);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
