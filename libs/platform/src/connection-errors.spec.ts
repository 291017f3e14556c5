import { Writable } from 'node:stream';
import { loadConfig } from '@switchyard/config';
import { freePort } from '@switchyard/devkit';
import { createLogger } from '@switchyard/observability';
import { TaskQueues } from '@switchyard/orchestration';
import { ErrorLogThrottle, logConnectionErrors, queueErrorLogger } from './connection-errors';
import { connectRedis } from './redis';

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

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !check(); i += 1) await new Promise((resolve) => setTimeout(resolve, 20));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

describe('ErrorLogThrottle', () => {
  it('admits the first of each error, then one per interval with the count left out', () => {
    let now = 0;
    const throttle = new ErrorLogThrottle(1_000, () => now);
    expect(throttle.admit('ECONNREFUSED')).toBe(0);
    expect(throttle.admit('ECONNREFUSED')).toBeUndefined();
    expect(throttle.admit('ETIMEDOUT')).toBe(0);
    now = 999;
    expect(throttle.admit('ECONNREFUSED')).toBeUndefined();
    now = 1_000;
    expect(throttle.admit('ECONNREFUSED')).toBe(2);
    expect(throttle.admit('ECONNREFUSED')).toBeUndefined();
  });
});

describe('connection errors are JSON log lines, never bare stderr', () => {
  it('a Redis connection and its BullMQ queues that cannot reach Redis log JSON warnings and print nothing to stderr', async () => {
    const { lines, logger } = capture();
    const consoleError = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const stderr = jest.spyOn(process.stderr, 'write');
    const port = await freePort();
    const redis = connectRedis(loadConfig({ REDIS_URL: `redis://127.0.0.1:${port}` }), 'spec');
    logConnectionErrors(redis, logger, { component: 'redis' });
    const queues = new TaskQueues(redis, '{spec}', { maxAttempts: 1 }, queueErrorLogger(logger));
    queues.open(['extract']);
    try {
      await until('a logged queue error', () => lines.some((l) => l.msg === 'queue connection error'));
      expect(lines.find((l) => l.msg === 'connection error')).toEqual(expect.objectContaining({ level: 'warn', component: 'redis', err: expect.stringContaining('ECONNREFUSED') }));
      expect(lines.find((l) => l.msg === 'queue connection error')).toEqual(expect.objectContaining({ level: 'warn', queue: 'extract' }));
      expect(consoleError).not.toHaveBeenCalled();
      expect(stderr).not.toHaveBeenCalled();
    } finally {
      redis.disconnect();
      await queues.close().catch(() => undefined);
      consoleError.mockRestore();
      stderr.mockRestore();
    }
  });
});
