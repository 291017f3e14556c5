import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Worker } from 'bullmq';
import type { AppConfig } from '@switchyard/config';
import type { Logger } from '@switchyard/observability';
import { APP_CONFIG, DATABASE, LOGGER, REDIS, checkDependencies, type RedisConnection } from '@switchyard/platform';
import type { DatabaseHandle } from '@switchyard/state';
import { ShutdownSignal } from './shutdown-signal';

export const TASK_WORKERS = Symbol('TASK_WORKERS');

/** Something that owns a BullMQ worker (the processors). */
export interface WorkerOwner {
  readonly role: string;
  readonly worker: Worker;
}

/**
 * Starts consuming only once Postgres and Redis answer (a worker that takes jobs it cannot
 * record would just burn attempts), and on shutdown stops taking jobs, gives running tasks
 * part of the grace period to finish, then aborts them so they hand their task back.
 */
@Injectable()
export class WorkerLifecycle implements OnApplicationBootstrap, OnModuleDestroy {
  private readinessTimer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(TASK_WORKERS) private readonly owners: WorkerOwner[],
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(REDIS) private readonly redis: RedisConnection,
    private readonly shutdown: ShutdownSignal,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.waitUntilReady();
    for (const { role, worker } of this.owners) {
      worker.concurrency = this.config.WORKER_CONCURRENCY;
      worker.on('error', (error) => this.logger.error({ err: error, queue: role }, 'queue worker error'));
      void worker.run().catch((error: unknown) => this.logger.error({ err: error, queue: role }, 'queue worker stopped'));
    }
    this.logger.info({ queues: this.owners.map((o) => o.role), concurrency: this.config.WORKER_CONCURRENCY }, 'worker consuming');
  }

  async onModuleDestroy(): Promise<void> {
    clearTimeout(this.readinessTimer);
    const handBackAfter = Math.floor(this.config.SHUTDOWN_GRACE_MS * 0.6);
    const timer = setTimeout(() => this.shutdown.abort(new Error('worker shutting down')), handBackAfter);
    timer.unref();
    await Promise.all(this.owners.map(({ worker }) => worker.close()));
    clearTimeout(timer);
  }

  private async waitUntilReady(): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const checks = await checkDependencies(this.database, this.redis);
      if (checks.every((c) => c.ok)) return;
      if (attempt === 1 || attempt % 10 === 0) {
        this.logger.warn({ checks: checks.filter((c) => !c.ok) }, 'waiting for dependencies before consuming');
      }
      await new Promise<void>((resolve) => {
        this.readinessTimer = setTimeout(resolve, Math.min(250 * attempt, 2_000));
      });
    }
  }
}
