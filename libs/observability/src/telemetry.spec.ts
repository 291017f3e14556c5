import { propagation, trace } from '@opentelemetry/api';
import { activeTraceId, extractTraceContext, inSpan, injectTraceCarrier, startTelemetry } from './telemetry';

describe('startTelemetry without an exporter', () => {
  it('gives every span real ids that follow awaits, child spans and queue carriers, recording nothing; shutdown undoes it', async () => {
    const telemetry = startTelemetry({ serviceName: 'test', exportFromEnv: false });
    try {
      const seen = await inSpan('outer', {}, async (outer) => {
        expect(outer.isRecording()).toBe(false);
        const traceId = activeTraceId();
        await new Promise((resolve) => setTimeout(resolve, 1));
        const carrier = injectTraceCarrier();
        const inner = await inSpan('inner', {}, async () => activeTraceId());
        return { traceId, afterAwait: activeTraceId(), inner, carrier, outerSpanId: outer.spanContext().spanId };
      });
      expect(seen.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(seen.traceId).not.toBe('0'.repeat(32));
      expect(seen.afterAwait).toBe(seen.traceId);
      expect(seen.inner).toBe(seen.traceId);
      // W3C trace context, not sampled: a worker continues the job's trace from it.
      expect(seen.carrier.traceparent).toBe(`00-${seen.traceId}-${seen.outerSpanId}-00`);
      const resumed = extractTraceContext(seen.carrier);
      expect(trace.getSpanContext(resumed)?.traceId).toBe(seen.traceId);
      // Baggage travels too, as with the SDK's default propagators.
      expect(propagation.fields()).toEqual(expect.arrayContaining(['traceparent', 'tracestate', 'baggage']));
    } finally {
      await telemetry.shutdown();
    }
    expect(propagation.fields()).toEqual([]);
  });
});
