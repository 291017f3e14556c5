import { connect, createServer, type AddressInfo, type LookupFunction } from 'node:net';

/** A port nothing listens on: bound, then released. */
function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** `localhost` as a dual-stack host resolves it: ::1 first, then 127.0.0.1. */
const dualStackLocalhost: LookupFunction = (_hostname, _options, callback) => {
  (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [
    { address: '::1', family: 6 },
    { address: '127.0.0.1', family: 4 },
  ]);
};

/**
 * The error Node gives for a refused connect to a dual-stack `localhost` (as pg meets it for
 * `postgres://…@localhost:5433`): an AggregateError with an empty message, one error per address.
 */
export async function refusedLocalhostConnectError(): Promise<{ error: Error; port: number }> {
  const port = await unusedPort();
  const error = await new Promise<Error>((resolve) => {
    const socket = connect({ host: 'localhost', port, autoSelectFamily: true, lookup: dualStackLocalhost });
    socket.on('error', resolve);
    socket.on('connect', () => {
      socket.destroy();
      resolve(new Error(`port ${port} unexpectedly accepted a connection`));
    });
  });
  return { error, port };
}
