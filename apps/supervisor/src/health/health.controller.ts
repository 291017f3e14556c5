import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import { DATABASE, REDIS, checkDependencies } from '@switchyard/platform';
import type { DatabaseHandle } from '@switchyard/state';

@Controller()
export class HealthController {
  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  /** Liveness: the process serves HTTP. Dependencies are /readyz's business. */
  @Get('healthz')
  healthz() {
    return { status: 'ok' };
  }

  @Get('readyz')
  async readyz(@Res() reply: FastifyReply) {
    const checks = await checkDependencies(this.database, this.redis);
    const ready = checks.every((c) => c.ok);
    void reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
  }
}
