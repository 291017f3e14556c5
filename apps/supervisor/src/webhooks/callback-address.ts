import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { checkCallbackUrl, isRefusedAddress } from '@switchyard/workflows';

export type ResolveAll = (host: string) => Promise<string[]>;

export const resolveAllAddresses: ResolveAll = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

export type CallbackAddressCheck = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * A `callback_url` may be used: `checkCallbackUrl` (http(s), no credentials, no refused literal
 * address), then every address its host resolves to must be public, unless the host is listed
 * in WEBHOOK_ALLOWED_HOSTS. Run at submit and again at each delivery (DNS rebinding).
 */
export async function checkCallbackAddress(raw: string, allowedHosts: readonly string[], resolve: ResolveAll = resolveAllAddresses): Promise<CallbackAddressCheck> {
  const checked = checkCallbackUrl(raw, allowedHosts);
  if (!checked.ok) return checked;
  const host = checked.url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(host) || allowedHosts.some((allowed) => allowed.toLowerCase() === host)) return checked;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    return { ok: false, reason: `host ${host} does not resolve (${error instanceof Error ? error.message : String(error)})` };
  }
  if (addresses.length === 0) return { ok: false, reason: `host ${host} does not resolve` };
  const refused = addresses.find((address) => isRefusedAddress(address, allowedHosts));
  if (refused !== undefined) {
    return { ok: false, reason: `host ${host} resolves to ${refused}, a loopback, private or link-local address (list the host in WEBHOOK_ALLOWED_HOSTS to allow it)` };
  }
  return checked;
}
