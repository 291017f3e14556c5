import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DATABASE, MigrationsReadiness, REDIS, checkDependencies, type RedisConnection } from '@switchyard/platform';
import type { DatabaseHandle } from '@switchyard/state';

@Controller()
export class HealthController {
  private readonly migrations: MigrationsReadiness;

  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(REDIS) private readonly redis: RedisConnection,
  ) {
    this.migrations = new MigrationsReadiness(database.pool);
  }

  /** Liveness: the process serves HTTP. Dependencies are /readyz's business. */
  @Get('healthz')
  healthz() {
    return { status: 'ok' };
  }

  /** Readiness: Postgres and Redis answer, and the database has every shipped migration. */
  @Get('readyz')
  async readyz(@Res() reply: FastifyReply) {
    const checks = await checkDependencies(this.database, this.redis, undefined, this.migrations);
    const ready = checks.every((c) => c.ok);
    void reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
  }
}
