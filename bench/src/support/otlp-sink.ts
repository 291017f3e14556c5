import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local OTLP/HTTP receiver that accepts every export (protobuf or JSON) and counts them. */
export class OtlpSink {
  requests = 0;
  bytes = 0;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpSink> {
    const sink: OtlpSink = new OtlpSink(
      createServer((req, res) => {
        req.on('data', (chunk: Buffer) => (sink.bytes += chunk.length));
        req.on('end', () => {
          sink.requests += 1;
          res.writeHead(200, { 'content-type': String(req.headers['content-type'] ?? 'application/x-protobuf') }).end();
        });
      }),
    );
    await new Promise<void>((resolve) => sink.server.listen(0, '127.0.0.1', resolve));
    return sink;
  }

  /** What makes a process export its spans here (the SDK's default protocol, http/protobuf). */
  get env(): Record<string, string> {
    return { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(this.server.address() as AddressInfo).port}` };
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
