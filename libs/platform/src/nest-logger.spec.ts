import { Writable } from 'node:stream';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { createLogger } from '@switchyard/observability';
import { NestPinoLogger } from './nest-logger';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger('spec', 'trace', destination) };
}

describe('NestPinoLogger', () => {
  it("writes Nest's messages as JSON lines with their context, and errors with their stack", () => {
    const { lines, logger } = capture();
    const nest = new NestPinoLogger(logger);
    nest.log('Mapped {/v1/jobs, POST} route', 'RouterExplorer');
    nest.error('Nest can\'t resolve dependencies of the JobsService', 'Error: at line 1', 'ExceptionHandler');
    nest.warn(new Error('boom'), 'Scanner');
    expect(lines).toEqual([
      expect.objectContaining({ level: 'debug', component: 'nest', context: 'RouterExplorer', msg: 'Mapped {/v1/jobs, POST} route' }),
      expect.objectContaining({ level: 'error', context: 'ExceptionHandler', stack: 'Error: at line 1', msg: "Nest can't resolve dependencies of the JobsService" }),
      expect.objectContaining({ level: 'warn', context: 'Scanner', msg: 'boom', err: expect.objectContaining({ message: 'boom' }) }),
    ]);
  });

  it('receives the messages of a Nest application given to it, and nothing reaches stdout as text', async () => {
    @Controller('x')
    class XController {
      @Get()
      get() {
        return 'x';
      }
    }
    @Module({ controllers: [XController] })
    class XModule {}
    const { lines, logger } = capture();
    const stdout = jest.spyOn(process.stdout, 'write');
    const app = await NestFactory.create(XModule, new FastifyAdapter(), { logger: new NestPinoLogger(logger) });
    await app.init();
    await app.close();
    expect(lines.some((l) => l.context === 'RoutesResolver' || l.context === 'RouterExplorer')).toBe(true);
    expect(stdout).not.toHaveBeenCalled();
    stdout.mockRestore();
  });
});
