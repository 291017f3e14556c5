import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';

export interface TunnellingProxy {
  /** `http://<user>:<password>@127.0.0.1:<port>`. */
  url: string;
  /** Every CONNECT it was asked for: the `host:port` and the Proxy-Authorization header sent. */
  connects: { target: string; auth: string | undefined }[];
  close(): Promise<void>;
}

/**
 * A forward proxy on loopback that only tunnels (HTTP CONNECT), as corporate egress proxies
 * do, and records what it was asked for: the stand-in for an egress proxy in tests.
 */
export async function startTunnellingProxy(credentials = 'gateway:s3cret'): Promise<TunnellingProxy> {
  const connects: TunnellingProxy['connects'] = [];
  const proxy = createServer((_req, res) => {
    res.writeHead(405, { allow: 'CONNECT' });
    res.end();
  });
  proxy.on('connect', (req, socket, head) => {
    connects.push({ target: req.url ?? '', auth: req.headers['proxy-authorization'] });
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://${credentials}@127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    connects,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
