import { checkCallbackUrl, isRefusedAddress } from './callback-url';

describe('isRefusedAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback range'],
    ['10.1.2.3', '10/8'],
    ['172.16.0.1', '172.16/12 start'],
    ['172.31.255.254', '172.16/12 end'],
    ['192.168.1.10', '192.168/16'],
    ['169.254.10.1', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['100.64.0.1', 'CGNAT start'],
    ['100.127.255.255', 'CGNAT end'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fc00::1', 'unique-local fc00'],
    ['fd12:3456::1', 'unique-local fd00'],
    ['fe80::1', 'IPv6 link-local'],
    ['febf::1', 'IPv6 link-local end'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['[::1]', 'bracketed'],
    ['not-an-ip', 'not an address'],
  ])('refuses %s (%s)', (ip) => {
    expect(isRefusedAddress(ip)).toBe(true);
  });

  it.each([
    ['8.8.8.8'],
    ['172.15.255.255'],
    ['172.32.0.1'],
    ['100.63.255.255'],
    ['100.128.0.1'],
    ['192.169.0.1'],
    ['2606:4700:4700::1111'],
    ['fec0::1'],
    ['::ffff:8.8.8.8'],
  ])('allows the public address %s', (ip) => {
    expect(isRefusedAddress(ip)).toBe(false);
  });

  it('allows a refused address listed in the allowed hosts', () => {
    expect(isRefusedAddress('127.0.0.1', ['127.0.0.1'])).toBe(false);
    expect(isRefusedAddress('::1', ['[::1]'])).toBe(false);
    expect(isRefusedAddress('::ffff:10.0.0.5', ['10.0.0.5'])).toBe(false);
    expect(isRefusedAddress('10.0.0.6', ['10.0.0.5'])).toBe(true);
  });
});

describe('checkCallbackUrl', () => {
  it('accepts http and https URLs of public hosts', () => {
    expect(checkCallbackUrl('https://hooks.example.com/switchyard?x=1')).toMatchObject({ ok: true });
    expect(checkCallbackUrl('http://8.8.8.8:8080/hook')).toMatchObject({ ok: true });
  });

  it.each([
    ['ftp://example.com/x', 'scheme ftp is not allowed (http or https only)'],
    ['file:///etc/passwd', 'scheme file is not allowed (http or https only)'],
    ['not a url', 'not a valid URL'],
    ['https://user:pw@example.com/', 'credentials in the URL are not allowed'],
    ['http://localhost:3000/hook', 'localhost is a loopback name (list it in WEBHOOK_ALLOWED_HOSTS to allow it)'],
    ['http://127.0.0.1/hook', '127.0.0.1 is a loopback, private or link-local address (list it in WEBHOOK_ALLOWED_HOSTS to allow it)'],
    ['http://[::1]:8080/', '::1 is a loopback, private or link-local address (list it in WEBHOOK_ALLOWED_HOSTS to allow it)'],
    ['http://169.254.169.254/latest/meta-data', '169.254.169.254 is a loopback, private or link-local address (list it in WEBHOOK_ALLOWED_HOSTS to allow it)'],
  ])('refuses %s', (url, reason) => {
    expect(checkCallbackUrl(url)).toEqual({ ok: false, reason });
  });

  it('accepts a loopback host listed in WEBHOOK_ALLOWED_HOSTS', () => {
    expect(checkCallbackUrl('http://localhost:3000/hook', ['LOCALHOST'])).toMatchObject({ ok: true });
    expect(checkCallbackUrl('http://127.0.0.1:9/hook', ['127.0.0.1'])).toMatchObject({ ok: true });
  });
});
