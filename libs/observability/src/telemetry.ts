import { context, propagation, trace, type Context, type Span, type SpanOptions } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { NoopSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TraceCarrier } from '@switchyard/contracts';

export interface TelemetryOptions {
  serviceName: string;
  /** True when OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_TRACES_EXPORTER ask for export (the SDK reads them). */
  exportFromEnv: boolean;
}

export interface Telemetry {
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry. Without an exporter configured, spans are still created (so trace
 * ids exist and travel with every queue job and log line) but are not sent anywhere.
 */
export function startTelemetry(options: TelemetryOptions): Telemetry {
  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    instrumentations: [],
    ...(options.exportFromEnv ? {} : { spanProcessors: [new NoopSpanProcessor()] }),
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
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
    span.recordException(error as Error);
    span.setStatus({ code: 2, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}

export function activeTraceId(): string | undefined {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && spanContext.traceId !== '00000000000000000000000000000000' ? spanContext.traceId : undefined;
}
