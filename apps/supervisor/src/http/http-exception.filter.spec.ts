import { HttpStatus, NotFoundException, type ArgumentsHost } from '@nestjs/common';
import type { Logger } from '@switchyard/observability';
import { ApiError } from './api-error';
import { HttpExceptionFilter } from './http-exception.filter';

function harness(raw: { destroyed?: boolean } = {}) {
  const logs: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) => logs.push({ level, obj, msg });
  const logger = { info: at('info'), warn: at('warn'), error: at('error') } as unknown as Logger;
  const sent: { status?: number; body?: unknown } = {};
  const reply = {
    raw: { destroyed: raw.destroyed ?? false, headersSent: false },
    status(code: number) {
      sent.status = code;
      return this;
    },
    header() {
      return this;
    },
    send(body: unknown) {
      sent.body = body;
      return this;
    },
  };
  const host = { switchToHttp: () => ({ getResponse: () => reply }) } as unknown as ArgumentsHost;
  return { filter: new HttpExceptionFilter(logger), host, logs, sent };
}

describe('HttpExceptionFilter', () => {
  it('logs an expected 503 at warn, with the cause and without a stack', () => {
    const { filter, host, logs, sent } = harness();
    const busy = new ApiError(HttpStatus.SERVICE_UNAVAILABLE, 'no_eligible_target', 'retry later');
    Object.assign(busy, { cause: new Error('all local targets are at their concurrency limit') });
    filter.catch(busy, host);
    expect(sent.status).toBe(503);
    expect(logs).toEqual([{ level: 'warn', obj: { status: 503, code: 'no_eligible_target', reason: 'all local targets are at their concurrency limit' }, msg: 'request answered with an error' }]);
  });

  it('logs a client that went away at info, and sends nothing', () => {
    const { filter, host, logs, sent } = harness({ destroyed: true });
    filter.catch(new Error('client went away'), host);
    expect(logs.map((l) => l.level)).toEqual(['info']);
    expect(logs[0]?.obj).not.toHaveProperty('err');
    expect(sent.status).toBeUndefined();
  });

  it("logs the router's abort after a hang-up at info, without a stack", () => {
    const { filter, host, logs } = harness();
    const aborted = Object.assign(new Error('the call was aborted: client went away'), { name: 'CallAbortedError', code: 'call_aborted', retryable: false });
    filter.catch(aborted, host);
    expect(logs).toEqual([{ level: 'info', obj: { code: 'internal', reason: 'the call was aborted: client went away' }, msg: 'request ended: the client went away' }]);
  });

  it('logs the unexpected at error with the error itself, and hides it from the caller', () => {
    const { filter, host, logs, sent } = harness();
    const boom = new Error('boom');
    filter.catch(boom, host);
    expect(logs).toEqual([{ level: 'error', obj: { err: boom }, msg: 'request failed' }]);
    expect(sent).toEqual({ status: 500, body: { error: { code: 'internal', message: 'internal error' } } });
  });

  it('repeats only a short cut of a message that quotes the URL', () => {
    const { filter, host, sent } = harness();
    filter.catch(new NotFoundException(`Cannot GET /v1/${'x'.repeat(10_000)}`), host);
    const body = sent.body as { error: { code: string; message: string } };
    expect(sent.status).toBe(404);
    expect(body.error.code).toBe('not_found');
    expect(body.error.message.length).toBeLessThan(200);
  });
});
