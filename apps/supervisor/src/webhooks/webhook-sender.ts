import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkCallbackUrl, isRefusedAddress } from '@switchyard/workflows';

export type WebhookSendResult = { ok: true; status: number } | { ok: false; status: number | null; error: string };

export type SendWebhook = (url: string, body: string, headers: Record<string, string>) => Promise<WebhookSendResult>;

/**
 * A DNS lookup that refuses loopback, private and link-local answers (unless allowed): the
 * connection goes to the very address that was checked, so a name that re-resolves to an
 * inner address after the submit-time check (DNS rebinding) is refused at delivery.
 */
export function guardedLookup(allowedHosts: readonly string[], host: string, resolve: typeof dnsLookup = dnsLookup): LookupFunction {
  const hostAllowed = allowedHosts.some((allowed) => allowed.toLowerCase() === host.toLowerCase());
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as unknown as LookupAddress[];
      const refused = hostAllowed ? undefined : list.find((a) => isRefusedAddress(a.address, allowedHosts));
      if (refused) return callback(new Error(`${hostname} resolves to ${refused.address}, a refused address`), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0];
      if (!first) return callback(new Error(`${hostname} does not resolve`), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

/** POSTs one webhook with a time limit; any 2xx is a delivery, anything else a failed attempt. */
export function webhookSender(allowedHosts: readonly string[], timeoutMs: number): SendWebhook {
  return (rawUrl, body, headers) =>
    new Promise<WebhookSendResult>((resolve) => {
      const checked = checkCallbackUrl(rawUrl, allowedHosts);
      if (!checked.ok) return resolve({ ok: false, status: null, error: checked.reason });
      const url = checked.url;
      const options: RequestOptions = {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body).toString(), 'user-agent': 'switchyard-webhook', ...headers },
        lookup: guardedLookup(allowedHosts, url.hostname),
        signal: AbortSignal.timeout(timeoutMs),
      };
      const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, (response) => {
        response.resume();
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          resolve(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `HTTP ${status}` });
        });
        response.on('error', (error) => resolve({ ok: false, status: response.statusCode ?? null, error: error.message }));
      });
      request.on('error', (error) => resolve({ ok: false, status: null, error: error.name === 'AbortError' ? `no answer within ${timeoutMs} ms` : error.message }));
      request.end(body);
    });
}
