import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RouterConfigError } from './router-config.error';
import { loadRouterConfig, parseRouterConfig } from './router-config.loader';

describe('canary and split config errors', () => {
  const base = (routes: string, canaries = '') => `
router:
  targets:
    - {name: a, type: local, endpoint: 'http://127.0.0.1:1/v1', model: m, max_concurrency: 1, context_window: 1000, cost_per_1k_tokens: {input: 0, output: 0}}
    - {name: b, type: local, endpoint: 'http://127.0.0.1:2/v1', model: m, max_concurrency: 1, context_window: 1000, cost_per_1k_tokens: {input: 0, output: 0}}
  routes:
${routes}
${canaries}`;
  const catchAll = (targets: string) => `    - {name: all, when: {all_else: true}, targets: ${targets}}`;
  const issuesOf = (text: string) => {
    try {
      parseRouterConfig(text, 'spec.yaml');
    } catch (error) {
      if (error instanceof RouterConfigError) return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
      throw error;
    }
    throw new Error('expected the config to be rejected');
  };
  const canaryBlock = (expect: string) => `  canaries:\n    cases:\n      - {name: c1, language: en, prompt: hi, expect: ${expect}}`;

  it('rejects negative weights, all-zero weights, half-weighted lists and unknown targets, naming the path', () => {
    expect(issuesOf(base(catchAll('[{name: a, weight: -1}, {name: b, weight: 1}]')))).toEqual(['router.routes.0.targets.0.weight: a weight cannot be negative']);
    expect(issuesOf(base(catchAll('[{name: a, weight: 0}, {name: b, weight: 0}]')))).toEqual(['router.routes.0.targets: every weight is 0: at least one target of a split needs a positive weight']);
    expect(issuesOf(base(catchAll('[a, {name: b, weight: 1}]')))).toEqual(['router.routes.0.targets: give every target of a split a weight ({name, weight}), or none (an ordered list)']);
    expect(issuesOf(base(catchAll('[{name: a, weight: 1}, {name: nope, weight: 1}]')))).toEqual(['router.routes.0.targets.1.name: unknown target "nope"; known targets: a, b']);
  });

  it('rejects a canary case with an invalid regex or JSON schema, or with no check, naming the path', () => {
    expect(issuesOf(base(catchAll('[a]'), canaryBlock("{regex: '(unclosed'}")))[0]).toMatch(/^router\.canaries\.cases\.0\.expect\.regex: not a valid regular expression/);
    expect(issuesOf(base(catchAll('[a]'), canaryBlock('{json_schema: {type: 12}}')))[0]).toMatch(/^router\.canaries\.cases\.0\.expect\.json_schema: not a usable JSON Schema/);
    expect(issuesOf(base(catchAll('[a]'), canaryBlock('{}')))).toEqual(['router.canaries.cases.0.expect: names no check; give `contains`, `regex` or `json_schema`']);
  });

  it('reads cases_file relative to the config file, and names that file and the path inside it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'canaries-'));
    try {
      writeFileSync(join(dir, 'cases.yaml'), "cases:\n  - {name: ok, language: en, prompt: hi, expect: {contains: hi}}\n  - {name: bad, language: zh, prompt: 你好, expect: {regex: '[z-a]'}}\n");
      writeFileSync(join(dir, 'router.yaml'), base(catchAll('[a]'), '  canaries: {cases_file: cases.yaml}'));
      const issues = (() => {
        try {
          loadRouterConfig(join(dir, 'router.yaml'));
        } catch (error) {
          if (error instanceof RouterConfigError) return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
        }
        return [];
      })();
      expect(issues[0]).toMatch(/^router\.canaries\.cases_file \(.*cases\.yaml\) cases\.1\.expect\.regex: not a valid regular expression/);
      writeFileSync(join(dir, 'cases.yaml'), 'cases:\n  - {name: ok, language: en, prompt: hi, expect: {contains: hi}}\n');
      expect(loadRouterConfig(join(dir, 'router.yaml')).config.canaries?.cases.map((c) => c.name)).toEqual(['ok']);
      expect(issuesOf(base(catchAll('[a]'), '  canaries: {cases_file: /nonexistent/cases.yaml}'))[0]).toMatch(/^router\.canaries\.cases_file: \/nonexistent\/cases\.yaml cannot be read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
