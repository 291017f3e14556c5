import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { limitsFor, loadTenantsConfig, parseTenantsConfig, TenantsConfigError } from './tenants';

describe('tenants config', () => {
  it('loads the shipped config/tenants.yaml', () => {
    const config = loadTenantsConfig(join(__dirname, '../../../config/tenants.yaml'));
    expect(config.global.max_running_jobs).toBe(64);
    expect(limitsFor(config, 'alpha')).toEqual({ max_running_jobs: 10, daily_budget_usd: 25, gateway_rpm: null });
    expect(limitsFor(config, 'someone-else')).toEqual({ max_running_jobs: 2, daily_budget_usd: null, gateway_rpm: null });
  });

  it('fills every default when the file says nothing', () => {
    const config = parseTenantsConfig('', 'empty.yaml');
    expect(config).toEqual({ defaults: { max_running_jobs: 2, daily_budget_usd: null, gateway_rpm: null }, global: { max_running_jobs: 64 }, tenants: {} });
  });

  it('lets a tenant clear a default budget with null', () => {
    const config = parseTenantsConfig('defaults: {daily_budget_usd: 5}\ntenants:\n  big: {daily_budget_usd: null, gateway_rpm: 600}\n', 't.yaml');
    expect(limitsFor(config, 'big')).toEqual({ max_running_jobs: 2, daily_budget_usd: null, gateway_rpm: 600 });
    expect(limitsFor(config, 'small').daily_budget_usd).toBe(5);
  });

  it('does not take a tenant limit from the object prototype', () => {
    expect(limitsFor(parseTenantsConfig('', 't.yaml'), 'constructor').max_running_jobs).toBe(2);
  });

  it('names the file and the path of each error', () => {
    const text = readFileSync(join(__dirname, '../../../config/tenants.yaml'), 'utf8').replace('max_running_jobs: 10', 'max_running_jobs: 0').replace('global: {', 'global: {burst: 1, ');
    expect(() => parseTenantsConfig(text, 'tenants.yaml')).toThrow(TenantsConfigError);
    try {
      parseTenantsConfig(text, 'tenants.yaml');
    } catch (error) {
      expect((error as TenantsConfigError).issues.map((i) => i.path)).toEqual(['global', 'tenants.alpha.max_running_jobs']);
      expect((error as Error).message).toMatch(/^tenants\.yaml: /);
    }
  });

  it('reports a file that cannot be read', () => {
    expect(() => loadTenantsConfig('/nonexistent/tenants.yaml')).toThrow('/nonexistent/tenants.yaml: (file): cannot be read');
  });
});
