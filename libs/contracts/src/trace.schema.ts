import { z } from 'zod';

/** W3C trace context (https://www.w3.org/TR/trace-context/) carried across queue hops. */
export const TraceCarrierSchema = z.object({
  traceparent: z.string().regex(/^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}$/, 'a W3C traceparent header value').optional(),
  tracestate: z.string().max(512).optional(),
});
export type TraceCarrier = z.infer<typeof TraceCarrierSchema>;
