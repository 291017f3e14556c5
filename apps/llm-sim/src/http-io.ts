import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';

export const MAX_BODY_BYTES = 8 * 1024 * 1024;

export class BodyTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`request body exceeds ${limitBytes} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

export function readBody(req: IncomingMessage, limitBytes: number = MAX_BODY_BYTES): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let overflowed = false;
    req.on('data', (chunk: Buffer) => {
      if (overflowed) return; // keep draining so the 413 can still be written
      received += chunk.length;
      if (received > limitBytes) {
        overflowed = true;
        reject(new BodyTooLargeError(limitBytes));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!overflowed) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}

/** True once nothing more can be written: the client went away, or the simulator is stopping. */
export function isGone(res: ServerResponse): boolean {
  return res.destroyed || res.writableEnded || !res.socket || res.socket.destroyed;
}

export function pickPrefixedHeaders(headers: IncomingHttpHeaders, prefix: string): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || !name.startsWith(prefix)) continue;
    picked[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return picked;
}

export function requestPath(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Resolves with the bound port, which differs from `port` when `port` is 0. */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address();
      if (address === null || typeof address === 'string') reject(new Error(`unexpected server address ${String(address)}`));
      else resolve(address.port);
    });
  });
}

/** Stops accepting and drops every open connection, hung and keep-alive ones included. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!server.listening) {
      server.closeAllConnections();
      resolve();
      return;
    }
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}
