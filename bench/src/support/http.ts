import { request, type Agent } from 'node:http';

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** POSTs a JSON body to 127.0.0.1 over the given keep-alive agent and reads the whole reply. */
export function postJson(to: { port: number; path: string; agent: Agent; headers?: Record<string, string> }, body: string): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: to.port,
        path: to.path,
        method: 'POST',
        agent: to.agent,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...to.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
