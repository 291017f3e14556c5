import { RequestMetaSchema } from '@switchyard/contracts';
import { createLogger } from '@switchyard/observability';
import { parseRouterConfig } from '../config/router-config.loader';
import { Router } from '../router';
import { NoEligibleTargetError } from './no-eligible-target.error';
import { READ_ONLY_REASON, ReadOnlyModeError } from './read-only-mode.error';

const CONFIG = `
router:
  probes: { enabled: false }
  fleet_limits: { enabled: false }
  targets:
    - { name: local_a, type: local, endpoint: "http://127.0.0.1:9/v1", model: m, max_concurrency: 4, context_window: 8192, cost_per_1k_tokens: { input: 0, output: 0 } }
    - { name: cloud_b, type: cloud, endpoint: "http://127.0.0.1:9/v1", model: m, max_concurrency: 4, context_window: 8192, cost_per_1k_tokens: { input: 0, output: 0 } }
  routes:
    - { name: fallback, when: { all_else: true }, target: local_a }
`;

describe('read-only mode', () => {
  const upstreamCalls: string[] = [];
  const router = new Router({
    config: parseRouterConfig(CONFIG, 'read-only.yaml'),
    secrets: () => undefined,
    logger: createLogger('read-only-test', 'silent'),
    providerFactory: (target) => ({
      target,
      complete: async () => {
        upstreamCalls.push(target.name);
        return { content: 'hi', model: target.model, usage: { inputTokens: 1, outputTokens: 1 } };
      },
    }),
  });
  const meta = (sensitivity: 'internal' | 'sensitive' = 'internal') => RequestMetaSchema.parse({ sensitivity });

  afterEach(() => router.setReadOnly(false));
  afterAll(() => router.close());

  it('refuses every decision, each target dropped for read-only mode, as a wait-able no-eligible-target failure', () => {
    router.setReadOnly(true);
    expect(router.readOnly).toBe(true);
    let refusal: unknown;
    try {
      router.decide(meta());
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ReadOnlyModeError);
    expect(refusal).toBeInstanceOf(NoEligibleTargetError);
    expect(refusal).toMatchObject({ code: 'no_eligible_target', retryable: true });
    const explanation = (refusal as ReadOnlyModeError).explanation;
    expect(new Set(explanation.candidates.map((candidate) => candidate.reason))).toEqual(new Set([READ_ONLY_REASON]));
    expect((refusal as Error).message).toMatch(/^read-only mode/);
  });

  it('keeps the hard constraint first in the explanation of a sensitive request', () => {
    router.setReadOnly(true);
    const explanation = router.explain(meta('sensitive'));
    expect(explanation.chosen).toBeNull();
    expect(explanation.error).toMatch(/^read-only mode/);
    expect(explanation.candidates.find((c) => c.target === 'cloud_b')?.reason).toBe('sensitive_requires_local');
    expect(explanation.candidates.find((c) => c.target === 'local_a')?.reason).toBe(READ_ONLY_REASON);
  });

  it('makes no upstream call, and routing resumes when it is switched off', async () => {
    router.setReadOnly(true);
    await expect(router.chat({ meta: meta(), messages: [{ role: 'user', content: 'hello' }] })).rejects.toBeInstanceOf(ReadOnlyModeError);
    expect(upstreamCalls).toEqual([]);
    router.setReadOnly(false);
    await expect(router.chat({ meta: meta(), messages: [{ role: 'user', content: 'hello' }] })).resolves.toMatchObject({ target: 'local_a' });
    expect(upstreamCalls).toEqual(['local_a']);
  });
});
