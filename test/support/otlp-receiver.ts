import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeTraceExport } from './otlp-protobuf';

/** One span as an OTLP/HTTP JSON export carries it, with the service that sent it. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, string | number | boolean>;
}

interface OtlpAnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: OtlpKeyValue[] }[] }[];
  }[];
}

function valueOf(value: OtlpAnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  return value.boolValue ?? '';
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
}

const PROTOBUF = 'application/x-protobuf';

/**
 * An OpenTelemetry collector stand-in: accepts OTLP/HTTP trace exports on /v1/traces, JSON
 * (`http/json`) or protobuf (`http/protobuf`), and keeps the spans and each export's content type.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly contentTypes: string[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const receiver: OtlpReceiver = new OtlpReceiver(
      createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const contentType = String(req.headers['content-type']);
          const json = contentType.startsWith('application/json');
          if (req.method !== 'POST' || req.url !== '/v1/traces' || !(json || contentType.startsWith(PROTOBUF))) {
            res.writeHead(415).end();
            return;
          }
          const body = Buffer.concat(chunks);
          receiver.contentTypes.push(contentType);
          receiver.accept(json ? (JSON.parse(body.toString('utf8')) as OtlpExport) : decodeTraceExport(body));
          // An empty ExportTraceServiceResponse: `{}` in JSON, zero bytes in protobuf.
          res.writeHead(200, { 'content-type': json ? 'application/json' : PROTOBUF }).end(json ? '{}' : undefined);
        });
      }),
    );
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The environment that makes a process export here, in `protocol`. */
  env(protocol: 'http/json' | 'http/protobuf' = 'http/json'): Record<string, string> {
    return { OTEL_EXPORTER_OTLP_ENDPOINT: this.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_BSP_SCHEDULE_DELAY: '200' };
  }

  inTrace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(body: OtlpExport): void {
    for (const resourceSpans of body.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({ service, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '', name: span.name, attributes: attributesOf(span.attributes) });
        }
      }
    }
  }
}
