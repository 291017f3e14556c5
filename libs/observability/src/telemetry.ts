import { context, createContextKey, diag, DiagLogLevel, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type SpanOptions } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { AlwaysOffSampler, BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import type { TraceCarrier } from '@switchyard/contracts';
import type { Logger } from 'pino';

export interface TelemetryOptions {
  /** The default `service.name`; `OTEL_SERVICE_NAME` wins when set. */
  serviceName: string;
  /**
   * True when OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_TRACES_EXPORTER ask for export. The SDK then
   * reads the standard variables itself (OTEL_EXPORTER_OTLP_PROTOCOL `http/protobuf` (default),
   * `http/json` or `grpc`, headers, timeouts) and exports in batches: an unreachable collector
   * costs a dropped batch and a warning, never a request's time.
   */
  exportFromEnv: boolean;
  /** Where the SDK's own warnings and errors go (a failed export), at most once per `diagIntervalMs` (30 s). */
  logger?: Logger;
  diagIntervalMs?: number;
}

export interface Telemetry {
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry. Without an exporter configured, spans are not recorded: each is a
 * non-recording span with its own ids, so trace ids still exist and travel with every queue
 * job, upstream call (`traceparent`, not sampled) and log line, at a fraction of the cost of
 * building spans nobody reads. That needs only a tracer provider, the async-context manager and
 * the W3C propagators; the full SDK (its exporters, gRPC included: ~14 MB of a worker's RSS) is
 * loaded only when spans are exported.
 */
export function startTelemetry(options: TelemetryOptions): Telemetry {
  if (options.logger) routeDiagnostics(options.logger, options.diagIntervalMs ?? 30_000);
  if (options.exportFromEnv) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load: only a process that exports spans pays for the SDK.
    const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
    const sdk = new NodeSDK({ serviceName: process.env.OTEL_SERVICE_NAME?.trim() || options.serviceName, instrumentations: [] });
    sdk.start();
    return { shutdown: () => sdk.shutdown() };
  }
  // What NodeSDK sets up without exporters, as it does it: AsyncLocalStorage contexts, trace context and baggage.
  const provider = new BasicTracerProvider({ sampler: new AlwaysOffSampler() });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  trace.setGlobalTracerProvider(provider);
  return {
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/**
 * The SDK's diagnostics as throttled JSON warnings: an unreachable collector fails every batch
 * export, and the batch is dropped; one line per interval says so without flooding the log.
 */
function routeDiagnostics(logger: Logger, intervalMs: number): void {
  let lastLoggedAt = Number.NEGATIVE_INFINITY;
  let notLogged = 0;
  const write = (message: string, args: unknown[]) => {
    const now = Date.now();
    if (now - lastLoggedAt < intervalMs) {
      notLogged += 1;
      return;
    }
    lastLoggedAt = now;
    const detail = args.map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : JSON.stringify(a))).join(' ');
    logger.warn({ component: 'telemetry', detail, ...(notLogged > 0 ? { repeats_not_logged: notLogged } : {}) }, `telemetry: ${message}`);
    notLogged = 0;
  };
  const ignore = () => undefined;
  diag.setLogger({ error: (m, ...a) => write(m, a), warn: (m, ...a) => write(m, a), info: ignore, debug: ignore, verbose: ignore }, DiagLogLevel.WARN);
}

export const tracer = () => trace.getTracer('switchyard');

/** The W3C trace context of `ctx` (default: the active one), to put on a queue job. */
export function injectTraceCarrier(ctx: Context = context.active()): TraceCarrier {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return {
    ...(carrier.traceparent ? { traceparent: carrier.traceparent } : {}),
    ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}),
  };
}

export function extractTraceContext(carrier: TraceCarrier | Record<string, string | string[] | undefined>): Context {
  return propagation.extract(context.active(), carrier);
}

/** Runs `fn` inside a span that is a child of `parent`, ending it and recording failure. */
export async function withSpan<T>(name: string, parent: Context, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const span = tracer().startSpan(name, options, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (error) {
    recordSpanError(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Runs `fn` inside a child span of the active one. */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
  return withSpan(name, context.active(), { attributes, kind }, fn);
}

export function recordSpanError(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

export function activeTraceId(): string | undefined {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && spanContext.traceId !== '00000000000000000000000000000000' ? spanContext.traceId : undefined;
}

const REQUEST_ID = createContextKey('switchyard.request_id');

/** `ctx` carrying the id of the HTTP request being served: every log line written while serving it names it. */
export function withRequestId(ctx: Context, requestId: string): Context {
  return ctx.setValue(REQUEST_ID, requestId);
}

/**
 * `trace_id` and `span_id` of the active span, and the id of the request being served, for every
 * log line written inside them (the logger's mixin).
 */
export function activeTraceFields(): { trace_id?: string; span_id?: string; request_id?: string } {
  const active = context.active();
  const requestId = active.getValue(REQUEST_ID);
  const fields = typeof requestId === 'string' ? { request_id: requestId } : {};
  const spanContext = trace.getSpan(active)?.spanContext();
  if (!spanContext || !trace.isSpanContextValid(spanContext)) return fields;
  return { ...fields, trace_id: spanContext.traceId, span_id: spanContext.spanId };
}

/** `headers` with the active trace context (`traceparent`, `tracestate`) added, for an outgoing request. */
export function withTraceHeaders(headers: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = { ...headers };
  propagation.inject(context.active(), out);
  return out;
}

export { SpanKind, type Span };

/** Adds an event to the active span, if any. */
export function addActiveSpanEvent(name: string, attributes: Attributes): void {
  trace.getActiveSpan()?.addEvent(name, attributes);
}
