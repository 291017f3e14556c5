import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { TenantsConfigStore } from './tenants-config';

describe('TenantsConfigStore', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'switchyard-tenants-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const store = (yaml: string) => {
    const path = join(dir, 'tenants.yaml');
    writeFileSync(path, yaml);
    return { path, store: new TenantsConfigStore(loadConfig({ TENANTS_CONFIG: path }), createLogger('test', 'silent')) };
  };

  it('reads the file at start and applies a changed one on reload', () => {
    const { path, store: tenants } = store('defaults: {max_running_jobs: 3}\ntenants:\n  alpha: {daily_budget_usd: 25}\n');
    expect(tenants.limitsOf('alpha')).toEqual({ max_running_jobs: 3, daily_budget_usd: 25, gateway_rpm: null });
    expect(tenants.globalRunningLimit()).toBe(64);
    writeFileSync(path, 'defaults: {max_running_jobs: 5}\nglobal: {max_running_jobs: 7}\n');
    expect(tenants.reloadNow()).toBe(true);
    expect(tenants.limitsOf('alpha').max_running_jobs).toBe(5);
    expect(tenants.globalRunningLimit()).toBe(7);
  });

  it('keeps the previous limits when the new file is invalid', () => {
    const { path, store: tenants } = store('defaults: {max_running_jobs: 3}\n');
    writeFileSync(path, 'defaults: {max_running_jobs: 0}\n');
    expect(tenants.reloadNow()).toBe(false);
    expect(tenants.limitsOf('anyone').max_running_jobs).toBe(3);
  });

  it('refuses to start on an invalid file, naming it and the path', () => {
    expect(() => store('defaults: {max_running_jobs: -1}\n')).toThrow(/tenants\.yaml: defaults\.max_running_jobs/);
  });
});
