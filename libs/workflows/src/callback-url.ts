import { isIP } from 'node:net';

export type CallbackUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * A `callback_url` as submitted: http(s) only, no credentials in it, and a host that is not
 * a refused address written literally. Names are resolved by the integration, which then
 * applies `isRefusedAddress` to every resolved address before connecting.
 */
export function checkCallbackUrl(raw: string, allowedHosts: readonly string[] = []): CallbackUrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: `scheme ${url.protocol.replace(':', '')} is not allowed (http or https only)` };
  if (url.username || url.password) return { ok: false, reason: 'credentials in the URL are not allowed' };
  const host = hostOf(url);
  if (isAllowedHost(host, allowedHosts)) return { ok: true, url };
  if (host === 'localhost' || host.endsWith('.localhost')) return { ok: false, reason: `${host} is a loopback name (list it in WEBHOOK_ALLOWED_HOSTS to allow it)` };
  if (isIP(host) && isRefusedAddress(host, allowedHosts)) return { ok: false, reason: `${host} is a loopback, private or link-local address (list it in WEBHOOK_ALLOWED_HOSTS to allow it)` };
  return { ok: true, url };
}

/** The URL's host without IPv6 brackets, lower-cased. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

function isAllowedHost(host: string, allowedHosts: readonly string[]): boolean {
  return allowedHosts.some((allowed) => allowed.trim().replace(/^\[|\]$/g, '').toLowerCase() === host);
}

/** IPv4 ranges a webhook may not reach: [first octets as a number, prefix length]. */
const REFUSED_V4: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 included
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254 included
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4], // multicast
  ['255.255.255.255', 32],
];

/**
 * Whether a (resolved) address is loopback, private, link-local, CGNAT, unique-local,
 * unspecified or multicast - unless it is listed in `allowedHosts`. IPv4-mapped IPv6
 * addresses are judged by their IPv4 address. Anything that is not an IP is refused.
 */
export function isRefusedAddress(ip: string, allowedHosts: readonly string[] = []): boolean {
  const address = ip.replace(/^\[|\]$/g, '').toLowerCase();
  if (isAllowedHost(address, allowedHosts)) return false;
  const version = isIP(address);
  if (version === 4) return refusedV4(ipv4ToNumber(address));
  if (version !== 6) return true;
  const groups = ipv6Groups(address);
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) {
    const v4 = ((groups[6]! << 16) | groups[7]!) >>> 0;
    if (isAllowedHost(numberToIpv4(v4), allowedHosts)) return false;
    return refusedV4(v4);
  }
  if (groups.every((g) => g === 0)) return true; // ::
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return true; // ::1
  const first = groups[0]!;
  if ((first & 0xfe00) === 0xfc00) return true; // fc00::/7 unique-local
  if ((first & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((first & 0xff00) === 0xff00) return true; // ff00::/8 multicast
  return false;
}

function refusedV4(value: number): boolean {
  return REFUSED_V4.some(([base, prefix]) => {
    const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
    return ((value & mask) >>> 0) === ((ipv4ToNumber(base) & mask) >>> 0);
  });
}

function ipv4ToNumber(ip: string): number {
  return ip.split('.').reduce((n, octet) => ((n << 8) | Number(octet)) >>> 0, 0);
}

function numberToIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => (value >>> shift) & 0xff).join('.');
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a dotted IPv4 tail converted). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4ToNumber(dotted[1]!);
    text = `${text.slice(0, dotted.index)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const zeros = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<number>(zeros).fill(0), ...right];
}
