import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tracer, withRequestId } from '@switchyard/observability';

const spans = new WeakMap<FastifyRequest, Span>();

/**
 * One server span per HTTP request, a child of the caller's `traceparent` if it sent one, and
 * the request's id (answered as `x-request-id`) on every log line written while serving it.
 * The rest of the request (guards, handler, planning, enqueue) runs inside it: `done` is called
 * in the span's context, which AsyncLocalStorage carries through the handler's awaits.
 */
export function traceHttpRequests(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const parent = propagation.extract(context.active(), request.headers);
    const span = tracer().startSpan(
      `${request.method} ${request.routeOptions?.url ?? '(unmatched)'}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'url.path': request.url.split('?')[0] ?? '', 'switchyard.request_id': String(request.id) } },
      parent,
    );
    spans.set(request, span);
    const requestId = String(request.id);
    void reply.header('x-request-id', requestId);
    context.with(withRequestId(trace.setSpan(parent, span), requestId), done);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    if (span && !span.isRecording()) spans.delete(request);
    else if (span) {
      const route = request.routeOptions?.url;
      if (route) span.updateName(`${request.method} ${route}`);
      span.setAttributes({ 'http.response.status_code': reply.statusCode, ...(route ? { 'http.route': route } : {}) });
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      spans.delete(request);
    }
    done();
  });
  fastify.addHook('onRequestAbort', (request, done) => {
    spans.get(request)?.end();
    spans.delete(request);
    done();
  });
}
