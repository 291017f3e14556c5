import { join } from 'node:path';
import { loadRouterConfig, parseRouterConfig } from './router-config.loader';
import { RouterConfigError } from './router-config.error';

const SHIPPED = join(__dirname, '../../../../config/router.yaml');

const VALID = `
router:
  targets:
    - name: local_a
      type: local
      endpoint: http://127.0.0.1:9001/v1
      model: m-a
      max_concurrency: 4
      context_window: 8192
      cost_per_1k_tokens: {input: 0.0001, output: 0.0002}
    - name: cloud_b
      type: cloud
      endpoint: https://api.example.com/v1
      model: m-b
      max_concurrency: 10
      context_window: 128000
      cost_per_1k_tokens: {input: 0.002, output: 0.008}
      api_key_env: CLOUD_KEY
  routes:
    - name: reasoning
      when: {task_type: [reasoning, plan], complexity: high}
      target: cloud_b
      priority: 50
    - name: fallback
      when: {all_else: true}
      target: local_a
`;

/** The error a bad config produces; fails the test when it parses. */
function configError(yamlText: string, source = 'test.yaml'): RouterConfigError {
  try {
    parseRouterConfig(yamlText, source);
  } catch (error) {
    if (error instanceof RouterConfigError) return error;
    throw error;
  }
  throw new Error('expected the config to be rejected');
}

describe('parseRouterConfig', () => {
  it('fills every default', () => {
    const { config, rules, source } = parseRouterConfig(VALID, 'test.yaml');
    expect(source).toBe('test.yaml');
    expect(config.default_policy).toBe('local_first');
    expect(config.fallback_to_any_eligible).toBe(true);
    expect(config.timeouts).toEqual({ local_ms: 30000, cloud_ms: 60000, connect_ms: 3000, first_token_local_ms: 15000, first_token_cloud_ms: 30000 });
    expect(config.retry_budget_per_job).toBe(12);
    expect(config.breaker).toMatchObject({ consecutive_failures: 10, cooldown_ms: 30000, half_open_probes: 3 });
    expect(config.recovery.steps).toEqual([10, 30, 60, 100]);
    expect(config.cache.enabled).toBe(false);
    expect(config.max_attempts_per_call).toBe(3);
    expect(config.targets.map((t) => [t.name, t.quality, t.timeout_ms])).toEqual([
      ['local_a', 5, 30000],
      ['cloud_b', 8, 60000],
    ]);
    expect(config.routes[0]).toMatchObject({ name: 'reasoning', targets: ['cloud_b'], when: { task_type: ['reasoning', 'plan'], complexity: ['high'] } });
    expect(config.routes[1]).toMatchObject({ name: 'fallback', priority: 0, targets: ['local_a'] });
    expect(rules.map((r) => r.name)).toEqual(['reasoning', 'fallback']);
  });

  it('honours per-target timeout and quality, and an ordered targets list', () => {
    const text = VALID.replace('model: m-a', 'model: m-a\n      timeout_ms: 1500\n      quality: 9').replace(
      'target: cloud_b\n',
      'targets: [cloud_b, local_a]\n',
    );
    const { config } = parseRouterConfig(text, 'x');
    expect(config.targets[0]).toMatchObject({ timeout_ms: 1500, quality: 9 });
    expect(config.routes[0]!.targets).toEqual(['cloud_b', 'local_a']);
  });

  it.each([
    ['an unknown key', VALID.replace('max_concurrency: 4', 'max_concurency: 4'), 'router.targets.0', /unknown field: max_concurency/],
    ['an unknown key in when', VALID.replace('complexity: high}', 'complexity: high, sensitive: true}'), 'router.routes.0.when', /unknown field: sensitive/],
    ['a bad enum value', VALID.replace('complexity: high', 'complexity: extreme'), 'router.routes.0.when.complexity', /expected one of low, medium, high, or a non-empty list/],
    ['a bad enum value in a list', VALID.replace('[reasoning, plan]', '[reasoning, planning]'), 'router.routes.0.when.task_type', /one of extract, classify/],
    ['a bad target type', VALID.replace('type: cloud', 'type: remote'), 'router.targets.1.type', /local|cloud/],
    ['a bad policy', VALID.replace('router:\n', 'router:\n  default_policy: cheapest\n'), 'router.default_policy', /local_first/],
    ['a non-http endpoint', VALID.replace('https://api.example.com/v1', 'ftp://api.example.com/v1'), 'router.targets.1.endpoint', /http\(s\) URL/],
    ['a missing target reference', VALID.replace('target: local_a', 'target: local_z'), 'router.routes.1.target', /unknown target "local_z"; known targets: local_a, cloud_b/],
    ['a missing target in a list', VALID.replace('target: cloud_b', 'targets: [cloud_b, nope]'), 'router.routes.0.targets.1', /unknown target "nope"/],
    ['both target and targets', VALID.replace('target: cloud_b', 'target: cloud_b\n      targets: [local_a]'), 'router.routes.0.targets', /either `target` or `targets`/],
    ['neither target nor targets', VALID.replace('      target: cloud_b\n', ''), 'router.routes.0.target', /needs `target`/],
    ['no catch-all', VALID.replace('{all_else: true}', '{sensitivity: public}'), 'router.routes', /no catch-all/],
    ['all_else combined with a condition', VALID.replace('{all_else: true}', '{all_else: true, priority: high}'), 'router.routes.1.when.all_else', /cannot be combined/],
    ['all_else: false', VALID.replace('{all_else: true}', '{all_else: false}'), 'router.routes.1.when.all_else', /all_else: true/],
    ['an empty when', VALID.replace('{task_type: [reasoning, plan], complexity: high}', '{}'), 'router.routes.0.when', /names no condition/],
    ['duplicate target names', VALID.replace('name: cloud_b', 'name: local_a'), 'router.targets.1.name', /duplicate target name "local_a"/],
    ['duplicate route names', VALID.replace('name: fallback', 'name: reasoning'), 'router.routes.1.name', /duplicate route name "reasoning"/],
    ['an empty target list', VALID.replace(/targets:\n(.|\n)*? {2}routes:/, 'targets: []\n  routes:'), 'router.targets', /at least one target/],
    ['a key instead of a variable name', VALID.replace('api_key_env: CLOUD_KEY', 'api_key_env: sk-abc123'), 'router.targets.1.api_key_env', /environment variable/],
  ])('rejects %s and names the path', (_label, text, path, message) => {
    const error = configError(text, 'conf/router.yaml');
    const issue = error.issues.find((i) => i.path === path);
    expect(issue).toBeDefined();
    expect(issue!.message).toMatch(message);
    expect(error.message).toContain('conf/router.yaml');
    expect(error.message).toContain(`${path}: `);
  });

  it('lists several problems at once', () => {
    const error = configError(VALID.replace('type: cloud', 'type: remote').replace('complexity: high', 'complexity: extreme'));
    expect(error.issues.map((i) => i.path)).toEqual(expect.arrayContaining(['router.targets.1.type', 'router.routes.0.when.complexity']));
  });

  it('rejects a route naming a missing target at its index among several routes', () => {
    const text = VALID.replace('  routes:\n', '  routes:\n    - {name: r0, when: {priority: high}, target: local_a}\n    - {name: r1, when: {tags: [x]}, target: cloud_b}\n').replace(
      'target: cloud_b\n      priority: 50',
      'target: cloud_c\n      priority: 50',
    );
    expect(configError(text).issues).toEqual([{ path: 'router.routes.2.target', message: 'unknown target "cloud_c"; known targets: local_a, cloud_b' }]);
  });

  it('names file, line and column on a YAML syntax error', () => {
    const error = configError('router:\n  targets:\n    - name: a\n   bad: [\n', 'conf/router.yaml');
    expect(error.message).toContain('conf/router.yaml');
    expect(error.message).toMatch(/line \d+, column \d+/);
    expect(error.issues[0]!.path).toMatch(/^\(yaml\) line 4, column \d+$/);
  });

  it('rejects duplicate YAML keys', () => {
    expect(configError('router:\n  default_policy: local_first\n  default_policy: quality_first\n').message).toMatch(/line 3, column 3/);
  });

  it('rejects an empty file and a missing router section', () => {
    expect(configError('').issues[0]!.path).toBe('(root)');
    expect(configError('routes: []\n').issues.map((i) => i.path)).toEqual(expect.arrayContaining(['router', '(root)']));
  });

  it('warns about legal but useless settings', () => {
    const text = VALID.replace('  routes:\n', '  routes:\n    - {name: secret_to_cloud, when: {sensitivity: sensitive}, target: cloud_b, priority: 5}\n').replace(
      '{all_else: true}\n      target: local_a',
      '{all_else: true}\n      target: local_a\n      priority: 10',
    );
    const { warnings } = parseRouterConfig(text, 'x');
    expect(warnings).toEqual([
      expect.stringContaining('route "secret_to_cloud" matches only sensitive requests but names only cloud targets'),
      expect.stringContaining('catch-all route "fallback" (priority 10) outranks "secret_to_cloud"'),
    ]);
  });
});

describe('loadRouterConfig', () => {
  it('loads the shipped config/router.yaml without warnings', () => {
    const compiled = loadRouterConfig(SHIPPED);
    expect(compiled.warnings).toEqual([]);
    expect(compiled.targets.map((t) => [t.name, t.type, t.endpoint, t.model, t.max_concurrency, t.context_window])).toEqual([
      ['local_vllm_7b', 'local', 'http://127.0.0.1:18101/v1', 'qwen2.5-7b-instruct', 16, 32768],
      ['local_vllm_32b', 'local', 'http://127.0.0.1:18102/v1', 'qwen2.5-32b-instruct', 8, 32768],
      ['cloud_main', 'cloud', 'http://127.0.0.1:18103/v1', 'gpt-4.1', 50, 128000],
    ]);
    expect(compiled.rules.map((r) => [r.name, r.priority])).toEqual([
      ['sensitive_light_work', 110],
      ['sensitive_data', 100],
      ['complex_reasoning', 80],
      ['fallback', 1],
    ]);
  });

  it('names the file when it cannot be read', () => {
    expect(() => loadRouterConfig('/nonexistent/router.yaml')).toThrow(/\/nonexistent\/router\.yaml[\s\S]*cannot be read/);
  });
});

describe('the gateway response cache block', () => {
  it('is read from the top-level response_cache block, beside router', () => {
    const { config } = parseRouterConfig(`${VALID}\nresponse_cache: {enabled: true, ttl_s: {qa: 60}}\n`, 'test.yaml');
    expect(config.cache).toEqual({ enabled: true, ttl_s: { qa: 60 }, idempotency_ttl_s: 86400 });
  });

  it('in the router section it is refused, saying where it moved', () => {
    const error = configError(VALID.replace('router:\n', 'router:\n  cache: {enabled: true}\n'));
    expect(error.issues).toEqual([expect.objectContaining({ path: 'router.cache', message: expect.stringContaining('response_cache') })]);
  });
});

describe('model aliases (router.models)', () => {
  it('are read with their request meta; auto cannot be one', () => {
    const { config } = parseRouterConfig(VALID.replace('router:\n', 'router:\n  models: {fast: {task_type: classify, complexity: low}}\n'), 'test.yaml');
    expect(config.models).toEqual({ fast: { task_type: 'classify', complexity: 'low' } });
    expect(configError(VALID.replace('router:\n', 'router:\n  models: {auto: {task_type: chat}}\n')).issues[0]!.path).toBe('router.models');
  });
});
