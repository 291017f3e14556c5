import { context, propagation, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { tracer, withRequestId } from '@switchyard/observability';

/** A request's server span and the context to serve it in (the span active, the request id on every log line). */
export interface ServerSpan {
  span: Span;
  context: Context;
}

/** One server span per HTTP request, a child of the caller's `traceparent` if it sent one. */
export function startServerSpan(method: string, route: string | undefined, url: string, headers: IncomingHttpHeaders, requestId: string): ServerSpan {
  const parent = propagation.extract(context.active(), headers);
  const span = tracer().startSpan(
    `${method} ${route ?? '(unmatched)'}`,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': url.split('?')[0] ?? '', 'switchyard.request_id': requestId } },
    parent,
  );
  return { span, context: withRequestId(trace.setSpan(parent, span), requestId) };
}

export function endServerSpan(span: Span, method: string, route: string | undefined, statusCode: number): void {
  if (!span.isRecording()) return;
  if (route) span.updateName(`${method} ${route}`);
  span.setAttributes({ 'http.response.status_code': statusCode, ...(route ? { 'http.route': route } : {}) });
  if (statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

const spans = new WeakMap<FastifyRequest, Span>();

/**
 * Every request fastify serves runs inside its server span, with its id answered as
 * `x-request-id`. The rest of the request (guards, handler, planning, enqueue) runs inside it:
 * `done` is called in the span's context, which AsyncLocalStorage carries through the
 * handler's awaits.
 */
export function traceHttpRequests(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const requestId = String(request.id);
    const served = startServerSpan(request.method, request.routeOptions?.url, request.url, request.headers, requestId);
    spans.set(request, served.span);
    void reply.header('x-request-id', requestId);
    context.with(served.context, done);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    if (span) endServerSpan(span, request.method, request.routeOptions?.url, reply.statusCode);
    spans.delete(request);
    done();
  });
  fastify.addHook('onRequestAbort', (request, done) => {
    spans.get(request)?.end();
    spans.delete(request);
    done();
  });
}
