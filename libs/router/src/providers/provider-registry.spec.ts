import type { TargetConfig } from '../config/router-config.schema';
import type { ChatProvider } from './chat-provider';
import { ProviderRegistry } from './provider-registry';

const target = (change: Partial<TargetConfig> = {}) =>
  ({ name: 't', type: 'local', endpoint: 'http://127.0.0.1:1/v1', model: 'm', timeout_ms: 1000, ...change }) as TargetConfig;

describe('ProviderRegistry', () => {
  function registry() {
    const built: { target: TargetConfig; apiKey: string; closed: boolean }[] = [];
    const providers = new ProviderRegistry((t, apiKey) => {
      const entry = { target: t, apiKey, closed: false };
      built.push(entry);
      return { target: t, complete: () => Promise.reject(new Error('not called')), close: () => Promise.resolve(void (entry.closed = true)) } as ChatProvider;
    });
    return { providers, built };
  }

  it('keeps one provider per target while its connection settings stay the same', () => {
    const { providers, built } = registry();
    const first = providers.get(target(), 'k');
    expect(providers.get(target(), 'k')).toBe(first);
    expect(built).toHaveLength(1);
  });

  it.each([
    ['endpoint', { endpoint: 'http://127.0.0.1:2/v1' }],
    ['model', { model: 'other' }],
    ['timeout', { timeout_ms: 2000 }],
    ['type (local → cloud decides the egress proxy)', { type: 'cloud' as const }],
  ])('builds a fresh provider when the %s changes, and closes the old one', async (_what, change) => {
    const { providers, built } = registry();
    const first = providers.get(target(), 'k');
    const second = providers.get(target(change), 'k');
    expect(second).not.toBe(first);
    await Promise.resolve();
    expect(built.map((b) => b.closed)).toEqual([true, false]);
  });

  it('builds a fresh provider for a rotated key, and closes them all on closeAll', async () => {
    const { providers, built } = registry();
    providers.get(target(), 'k1');
    providers.get(target(), 'k2');
    await providers.closeAll();
    expect(built.map((b) => [b.apiKey, b.closed])).toEqual([
      ['k1', true],
      ['k2', true],
    ]);
  });
});
