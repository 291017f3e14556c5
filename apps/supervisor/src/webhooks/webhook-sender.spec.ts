import type { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { guardedLookup } from './webhook-sender';

/** A resolver that answers `addresses` for every name, as a rebinding DNS server would at delivery time. */
const resolvingTo = (...addresses: string[]) =>
  ((_host: string, _options: unknown, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) =>
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    )) as unknown as typeof dnsLookup;

function lookupOnce(lookup: ReturnType<typeof guardedLookup>, all = false): Promise<{ error: Error | null; address: unknown }> {
  return new Promise((resolve) => lookup('hooks.example.com', { all }, (error, address) => resolve({ error, address })));
}

describe('guardedLookup (delivery-time address check)', () => {
  it('connects to a public address', async () => {
    expect(await lookupOnce(guardedLookup([], 'hooks.example.com', resolvingTo('93.184.216.34')))).toEqual({ error: null, address: '93.184.216.34' });
  });

  it('refuses a name that now resolves to a private or loopback address (DNS rebinding)', async () => {
    for (const address of ['10.0.0.8', '127.0.0.1', '169.254.169.254', '::1']) {
      const { error } = await lookupOnce(guardedLookup([], 'hooks.example.com', resolvingTo('93.184.216.34', address)), true);
      expect(error?.message).toContain(`resolves to ${address}`);
    }
  });

  it('lets a host listed in WEBHOOK_ALLOWED_HOSTS resolve to a private address', async () => {
    const { error, address } = await lookupOnce(guardedLookup(['hooks.example.com'], 'hooks.example.com', resolvingTo('10.0.0.8')));
    expect([error, address]).toEqual([null, '10.0.0.8']);
  });
});
