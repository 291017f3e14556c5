import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { WorkflowCatalog } from '@switchyard/orchestration';
import { DATABASE, MigrationsReadiness, REDIS, checkDependencies, type RedisConnection } from '@switchyard/platform';
import { Router } from '@switchyard/router';
import { formatWorkflowIssue } from '@switchyard/workflows';
import type { DatabaseHandle } from '@switchyard/state';

@Controller()
export class HealthController {
  private readonly migrations: MigrationsReadiness;

  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(REDIS) private readonly redis: RedisConnection,
    @Inject(WorkflowCatalog) private readonly workflows: WorkflowCatalog,
    private readonly router: Router,
  ) {
    this.migrations = new MigrationsReadiness(database.pool);
  }

  /** Liveness: the process serves HTTP. Dependencies are /readyz's business. */
  @Get('healthz')
  healthz() {
    return { status: 'ok' };
  }

  /**
   * Readiness: Postgres and Redis answer, the database has every shipped migration, and at least
   * one workflow loaded. Rejected workflow files are listed under the `workflows` check (file,
   * path, problem) without making the process unready: the valid job types still serve.
   * `read_only` says whether the operator's read-only mode is on; it does not make the process
   * unready (it still serves cached answers, job reads and the admin API).
   */
  @Get('readyz')
  async readyz(@Res() reply: FastifyReply) {
    const errors = this.workflows.errors.map(formatWorkflowIssue);
    const workflows = {
      name: 'workflows',
      ok: this.workflows.workflows.size > 0,
      types: [...this.workflows.workflows.keys()].sort(),
      ...(errors.length ? { error: `${errors.length} workflow problem(s); rejected files are not loaded`, rejected: errors } : {}),
    };
    const checks = [...(await checkDependencies(this.database, this.redis, undefined, this.migrations)), workflows];
    const ready = checks.every((c) => c.ok);
    void reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', read_only: this.router.readOnly, checks });
  }
}
