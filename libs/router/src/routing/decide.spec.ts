import { join } from 'node:path';
import { RequestMetaSchema, type RequestMetaInput } from '@switchyard/contracts';
import { loadRouterConfig, parseRouterConfig } from '../config/router-config.loader';
import type { CandidateFilter } from './candidate-filter';
import { decideRoute } from './decide';
import { NoEligibleTargetError } from './no-eligible-target.error';
import { ANY_ELIGIBLE_RULE } from './routing-decision';

const meta = (input: RequestMetaInput) => RequestMetaSchema.parse(input);

const target = (name: string, type: string, cost: number, quality: number) => `
    - name: ${name}
      type: ${type}
      endpoint: http://127.0.0.1:9000/v1
      model: ${name}-model
      max_concurrency: 4
      context_window: 8192
      quality: ${quality}
      cost_per_1k_tokens: {input: ${cost}, output: ${cost}}`;

const yaml = (options: { policy?: string; fallback?: boolean } = {}) => `
router:
  default_policy: ${options.policy ?? 'local_first'}
  fallback_to_any_eligible: ${options.fallback ?? true}
  targets:${target('l_big', 'local', 0.0004, 6)}${target('c_main', 'cloud', 0.002, 8)}${target('l_small', 'local', 0.0001, 4)}${target('c_premium', 'cloud', 0.01, 10)}
  routes:
    - {name: fallback, when: {all_else: true}, target: l_small, priority: 1}
    - {name: tagged, when: {tags: [vip, legal]}, target: c_premium, priority: 60}
    - {name: reasoning, when: {task_type: [reasoning, plan], complexity: high}, targets: [c_main, l_big], priority: 50}
    - {name: code_a, when: {task_type: code}, target: l_big, priority: 40}
    - {name: code_b, when: {task_type: code}, target: c_main, priority: 40}
    - {name: by_business, when: {business_type: [billing, legal]}, target: l_big, priority: 30}
`;

const config = parseRouterConfig(yaml(), 'decide.spec');

function noEligible(run: () => unknown): NoEligibleTargetError {
  try {
    run();
  } catch (error) {
    if (error instanceof NoEligibleTargetError) return error;
    throw error;
  }
  throw new Error('expected NoEligibleTargetError');
}

describe('decideRoute: rule matching', () => {
  it('sorts rules by priority, ties in config order', () => {
    expect(config.rules.map((r) => r.name)).toEqual(['tagged', 'reasoning', 'code_a', 'code_b', 'by_business', 'fallback']);
  });

  it('takes the highest-priority matching rule', () => {
    const decision = decideRoute(config, meta({ task_type: 'reasoning', complexity: 'high', tags: ['vip', 'legal'] }));
    expect(decision).toMatchObject({ rule: 'tagged', target: { name: 'c_premium' }, matchedRules: ['tagged', 'reasoning', 'fallback'] });
    expect(decision.candidates).toEqual([{ target: 'c_premium', rule: 'tagged', eligible: true, reason: undefined }]);
  });

  it('breaks priority ties by config order', () => {
    const decision = decideRoute(config, meta({ task_type: 'code' }));
    expect(decision).toMatchObject({ rule: 'code_a', target: { name: 'l_big' }, matchedRules: ['code_a', 'code_b', 'fallback'] });
  });

  it('matches any value of a list', () => {
    expect(decideRoute(config, meta({ task_type: 'plan', complexity: 'high' })).rule).toBe('reasoning');
    expect(decideRoute(config, meta({ task_type: 'reasoning', complexity: 'high' })).target.name).toBe('c_main');
    expect(decideRoute(config, meta({ business_type: 'billing' })).rule).toBe('by_business');
  });

  it('needs every tag of a tags condition', () => {
    expect(decideRoute(config, meta({ tags: ['vip'] })).rule).toBe('fallback');
    expect(decideRoute(config, meta({ tags: ['legal', 'other', 'vip'] })).rule).toBe('tagged');
  });

  it('falls to the catch-all when nothing else matches', () => {
    const decision = decideRoute(config, meta({ task_type: 'reasoning', complexity: 'medium' }));
    expect(decision).toMatchObject({ rule: 'fallback', target: { name: 'l_small' }, matchedRules: ['fallback'], policy: 'local_first' });
  });
});

describe('decideRoute: exhaustion and fallback', () => {
  it('walks a rule’s ordered list, then the next matching rule', () => {
    const reasoning = meta({ task_type: 'reasoning', complexity: 'high' });
    expect(decideRoute(config, reasoning, { excludeTargets: ['c_main'] })).toMatchObject({ rule: 'reasoning', target: { name: 'l_big' } });
    const decision = decideRoute(config, reasoning, { excludeTargets: new Set(['c_main', 'l_big']) });
    expect(decision).toMatchObject({ rule: 'fallback', target: { name: 'l_small' } });
    expect(decision.candidates).toEqual([
      { target: 'c_main', rule: 'reasoning', eligible: false, reason: 'excluded' },
      { target: 'l_big', rule: 'reasoning', eligible: false, reason: 'excluded' },
      { target: 'l_small', rule: 'fallback', eligible: true, reason: undefined },
    ]);
  });

  it('records an exhausted tie and moves to the other', () => {
    const decision = decideRoute(config, meta({ task_type: 'code' }), { excludeTargets: ['l_big'] });
    expect(decision).toMatchObject({ rule: 'code_b', target: { name: 'c_main' } });
    expect(decision.candidates.map((c) => [c.target, c.rule, c.reason])).toEqual([
      ['l_big', 'code_a', 'excluded'],
      ['c_main', 'code_b', undefined],
    ]);
  });

  it('tries any eligible target after every matching rule, local and cheap first', () => {
    expect(config.fallbackOrder.local_first.map((i) => config.targets[i]!.name)).toEqual(['l_small', 'l_big', 'c_main', 'c_premium']);
    const decision = decideRoute(config, meta({ task_type: 'extract' }), { excludeTargets: ['l_small'] });
    expect(decision).toMatchObject({ rule: ANY_ELIGIBLE_RULE, target: { name: 'l_big' }, policy: 'local_first' });
    expect(decision.candidates).toEqual([
      { target: 'l_small', rule: 'fallback', eligible: false, reason: 'excluded' },
      { target: 'l_big', rule: ANY_ELIGIBLE_RULE, eligible: true, reason: undefined },
    ]);
  });

  it('uses quality_first for the fallback step of a high-priority request', () => {
    expect(config.fallbackOrder.quality_first.map((i) => config.targets[i]!.name)).toEqual(['c_premium', 'c_main', 'l_big', 'l_small']);
    const decision = decideRoute(config, meta({ task_type: 'extract', priority: 'high' }), { excludeTargets: ['l_small'] });
    expect(decision).toMatchObject({ rule: ANY_ELIGIBLE_RULE, target: { name: 'c_premium' }, policy: 'quality_first' });
  });

  it('uses the configured default policy otherwise', () => {
    const quality = parseRouterConfig(yaml({ policy: 'quality_first' }), 'x');
    expect(decideRoute(quality, meta({}), { excludeTargets: ['l_small'] })).toMatchObject({ target: { name: 'c_premium' }, policy: 'quality_first' });
    const latency = parseRouterConfig(yaml({ policy: 'latency_first' }), 'x');
    expect(decideRoute(latency, meta({}), { excludeTargets: ['l_small'] })).toMatchObject({ target: { name: 'l_big' }, policy: 'latency_first' });
  });

  it('does not list a target twice in the fallback step', () => {
    const decision = decideRoute(config, meta({ task_type: 'reasoning', complexity: 'high' }), { excludeTargets: ['c_main', 'l_big', 'l_small'] });
    expect(decision.target.name).toBe('c_premium');
    expect(decision.candidates.map((c) => `${c.target}@${c.rule}`)).toEqual(['c_main@reasoning', 'l_big@reasoning', 'l_small@fallback', `c_premium@${ANY_ELIGIBLE_RULE}`]);
  });

  it('fails with the whole explanation when nothing is left', () => {
    const strict = parseRouterConfig(yaml({ fallback: false }), 'x');
    const error = noEligible(() => decideRoute(strict, meta({ task_type: 'code' }), { excludeTargets: ['l_big', 'c_main', 'l_small'] }));
    expect(error.retryable).toBe(true);
    expect(error.explanation).toEqual({
      policy: 'local_first',
      matchedRules: ['code_a', 'code_b', 'fallback'],
      candidates: [
        { target: 'l_big', rule: 'code_a', eligible: false, reason: 'excluded' },
        { target: 'c_main', rule: 'code_b', eligible: false, reason: 'excluded' },
        { target: 'l_small', rule: 'fallback', eligible: false, reason: 'excluded' },
      ],
    });
    expect(error.message).toContain('matched rules: code_a, code_b, fallback');
    expect(error.message).toContain('l_big via code_a: excluded');
    expect(error.message).toContain('l_small via fallback: excluded');
    expect(error.message).not.toContain('sensitive');
  });

  it('says a sensitive request will not leave local targets', () => {
    const error = noEligible(() => decideRoute(config, meta({ sensitivity: 'sensitive', task_type: 'reasoning', complexity: 'high' }), { excludeTargets: ['l_big', 'l_small'] }));
    expect(error.message).toContain('c_main via reasoning: sensitive_requires_local');
    expect(error.message).toContain(`c_premium via ${ANY_ELIGIBLE_RULE}: sensitive_requires_local`);
    expect(error.message).toMatch(/never sent anywhere but local targets/);
  });
});

describe('decideRoute: filters', () => {
  it('records the reason an injected filter gives, first drop wins', () => {
    const unhealthy: CandidateFilter = (t) => (t.name === 'c_main' ? { reason: 'unhealthy' } : null);
    const alsoDrops: CandidateFilter = (t) => (t.name === 'c_main' ? { reason: 'second' } : null);
    const decision = decideRoute(config, meta({ task_type: 'reasoning', complexity: 'high' }), { filters: [unhealthy, alsoDrops] });
    expect(decision.target.name).toBe('l_big');
    expect(decision.candidates[0]).toEqual({ target: 'c_main', rule: 'reasoning', eligible: false, reason: 'unhealthy' });
  });

  it('reports the hard constraint before exclusion and filters', () => {
    const drop: CandidateFilter = () => ({ reason: 'filtered' });
    const decision = decideRoute(config, meta({ sensitivity: 'sensitive', task_type: 'reasoning', complexity: 'high' }), {
      excludeTargets: ['c_main'],
      filters: [(t, m) => (t.name === 'l_big' ? null : drop(t, m))],
    });
    expect(decision.target.name).toBe('l_big');
    expect(decision.candidates[0]!.reason).toBe('sensitive_requires_local');
  });

  it('judges each target once per decision', () => {
    let calls = 0;
    const counting: CandidateFilter = () => {
      calls++;
      return { reason: 'down' };
    };
    noEligible(() => decideRoute(config, meta({ task_type: 'code' }), { filters: [counting] }));
    expect(calls).toBe(4);
  });
});

describe('decideRoute with the shipped config/router.yaml', () => {
  const shipped = loadRouterConfig(join(__dirname, '../../../../config/router.yaml'));

  it.each([
    [{ task_type: 'extract', complexity: 'low', sensitivity: 'internal' }, 'local_vllm_7b', 'fallback'],
    [{ task_type: 'reasoning', complexity: 'high', sensitivity: 'internal' }, 'cloud_main', 'complex_reasoning'],
    [{ task_type: 'reasoning', complexity: 'high', sensitivity: 'sensitive' }, 'local_vllm_32b', 'sensitive_data'],
    [{ task_type: 'extract', complexity: 'low', sensitivity: 'sensitive' }, 'local_vllm_7b', 'sensitive_light_work'],
  ] as const)('%o goes to %s', (input, expectedTarget, expectedRule) => {
    const decision = decideRoute(shipped, meta(input));
    expect(decision.target.name).toBe(expectedTarget);
    expect(decision.rule).toBe(expectedRule);
  });

  it('fails a sensitive synthesis over to the 7B, never to the cloud', () => {
    const sensitive = meta({ task_type: 'reasoning', complexity: 'high', sensitivity: 'sensitive' });
    expect(decideRoute(shipped, sensitive, { excludeTargets: ['local_vllm_32b'] })).toMatchObject({ target: { name: 'local_vllm_7b' }, rule: 'fallback' });
    expect(() => decideRoute(shipped, sensitive, { excludeTargets: ['local_vllm_32b', 'local_vllm_7b'] })).toThrow(NoEligibleTargetError);
  });
});
