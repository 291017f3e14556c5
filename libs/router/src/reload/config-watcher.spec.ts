import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@switchyard/observability';
import type { CompiledRouterConfig } from '../config/compile-router-config';
import { RouterConfigWatcher } from './config-watcher';

const yaml = (target: string) => `
router:
  targets:
    - {name: ${target}, type: local, endpoint: "http://127.0.0.1:1/v1", model: a, max_concurrency: 2, context_window: 1000, cost_per_1k_tokens: {input: 0, output: 0}}
  routes:
    - {name: all, when: {all_else: true}, target: ${target}}
`;

async function waitFor<T>(what: string, check: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('RouterConfigWatcher', () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-watch-'));
  const file = join(dir, 'router.yaml');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('applies a valid change and rejects an invalid one, naming the path, keeping the old config', async () => {
    writeFileSync(file, yaml('first'));
    const applied: CompiledRouterConfig[] = [];
    const errors: string[] = [];
    const logger = createLogger('watcher', 'silent');
    jest.spyOn(logger, 'error').mockImplementation(((_obj: unknown, message: string) => errors.push(message)) as never);
    const watcher = new RouterConfigWatcher({ filePath: file, apply: (c) => applied.push(c), logger, debounceMs: 20 });
    watcher.start();
    try {
      writeFileSync(file, yaml('second'));
      const config = await waitFor('the change', () => applied.at(-1));
      expect(config.targets[0]!.name).toBe('second');

      writeFileSync(file, yaml('bad name!'));
      const message = await waitFor('the rejection', () => errors.at(-1));
      expect(message).toContain(file);
      expect(message).toMatch(/rejected, the previous config stays in force/);
      expect(applied.at(-1)!.targets[0]!.name).toBe('second');

      // A split with every weight 0: rejected too, the old config stays.
      const appliedBefore = applied.length;
      writeFileSync(file, yaml('second').replace('target: second', 'targets: [{name: second, weight: 0}]'));
      await waitFor('the second rejection', () => (errors.length >= 2 ? errors.at(-1) : undefined));
      expect(errors.at(-1)).toMatch(/rejected, the previous config stays in force/);
      expect(applied).toHaveLength(appliedBefore);
    } finally {
      watcher.stop();
    }
  });

  it('sees a Kubernetes ConfigMap update (the ..data symlink swapped; the file itself never changes)', async () => {
    // The kubelet's atomic writer: router.yaml → ..data/router.yaml, ..data → ..<timestamp>/;
    // an update writes a new timestamped dir and renames a new ..data over the old one.
    const mount = mkdtempSync(join(tmpdir(), 'router-configmap-'));
    const version = (name: string, target: string) => {
      mkdirSync(join(mount, name));
      writeFileSync(join(mount, name, 'router.yaml'), yaml(target));
    };
    version('..2026_11_30_v1', 'first');
    symlinkSync('..2026_11_30_v1', join(mount, '..data'));
    symlinkSync('..data/router.yaml', join(mount, 'router.yaml'));
    const applied: CompiledRouterConfig[] = [];
    const watcher = new RouterConfigWatcher({ filePath: join(mount, 'router.yaml'), apply: (c) => applied.push(c), logger: createLogger('watcher', 'silent'), debounceMs: 20 });
    watcher.start();
    try {
      version('..2026_11_30_v2', 'second');
      symlinkSync('..2026_11_30_v2', join(mount, '..data_tmp'));
      renameSync(join(mount, '..data_tmp'), join(mount, '..data'));
      const config = await waitFor('the ConfigMap update', () => applied.at(-1));
      expect(config.targets[0]!.name).toBe('second');
    } finally {
      watcher.stop();
      rmSync(mount, { recursive: true, force: true });
    }
  });
});
