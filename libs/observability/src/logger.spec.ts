import { Writable } from 'node:stream';
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { createLogger } from './logger';
import { withRequestId } from './telemetry';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger('spec', 'info', destination) };
}

describe('createLogger', () => {
  const manager = new AsyncLocalStorageContextManager();
  beforeAll(() => context.setGlobalContextManager(manager.enable()));
  afterAll(() => {
    manager.disable();
    context.disable();
  });

  it('writes the trace and span id of the active span, and the request id, on every line inside them', async () => {
    const { lines, logger } = capture();
    const span = trace.wrapSpanContext({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED });
    logger.info('outside');
    await context.with(withRequestId(trace.setSpan(context.active(), span), 'req-42'), async () => {
      await Promise.resolve();
      logger.child({ component: 'x' }).info('inside');
    });
    expect(lines[0]).not.toHaveProperty('trace_id');
    expect(lines[0]).not.toHaveProperty('request_id');
    expect(lines[1]).toEqual(expect.objectContaining({ msg: 'inside', trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: '00f067aa0ba902b7', request_id: 'req-42' }));
  });
});
