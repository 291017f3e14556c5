import { checkCallbackAddress, type ResolveAll } from './callback-address';

const resolvesTo =
  (...addresses: string[]): ResolveAll =>
  async () =>
    addresses;

describe('checkCallbackAddress', () => {
  it('accepts a public name and refuses one that resolves to a private, loopback or link-local address', async () => {
    expect((await checkCallbackAddress('https://hooks.example.com/x', [], resolvesTo('93.184.216.34'))).ok).toBe(true);
    for (const address of ['10.1.2.3', '127.0.0.1', '169.254.169.254', '::1', 'fd00::1']) {
      const check = await checkCallbackAddress('https://hooks.example.com/x', [], resolvesTo('93.184.216.34', address));
      expect(check).toEqual({ ok: false, reason: expect.stringContaining(`resolves to ${address}`) });
    }
  });

  it('lets WEBHOOK_ALLOWED_HOSTS name a host or an address', async () => {
    expect((await checkCallbackAddress('http://hooks.internal/x', ['hooks.internal'], resolvesTo('10.0.0.5'))).ok).toBe(true);
    expect((await checkCallbackAddress('http://hooks.internal/x', ['10.0.0.5'], resolvesTo('10.0.0.5'))).ok).toBe(true);
    expect((await checkCallbackAddress('http://127.0.0.1:9000/x', ['127.0.0.1'])).ok).toBe(true);
  });

  it('refuses what the URL check refuses, and a host that does not resolve', async () => {
    expect(await checkCallbackAddress('ftp://example.com/x', [], resolvesTo('93.184.216.34'))).toMatchObject({ ok: false });
    expect(await checkCallbackAddress('https://user:pw@example.com/x', [], resolvesTo('93.184.216.34'))).toMatchObject({ ok: false });
    const failing: ResolveAll = async () => {
      throw new Error('ENOTFOUND');
    };
    expect(await checkCallbackAddress('https://nowhere.invalid/x', [], failing)).toEqual({ ok: false, reason: expect.stringContaining('does not resolve') });
  });
});
