import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { Worker } from 'bullmq';
import type { AppConfig } from '@switchyard/config';
import type { Logger } from '@switchyard/observability';
import { TaskQueues, WorkflowCatalog } from '@switchyard/orchestration';
import { APP_CONFIG, DATABASE, LOGGER, REDIS, checkDependencies, type RedisConnection } from '@switchyard/platform';
import type { DatabaseHandle } from '@switchyard/state';
import { ShutdownSignal } from './shutdown-signal';
import { TaskProcessor } from './task.processor';

/** WORKER_QUEUES → which of the workflows' roles this process consumes ('all': every one). */
export function selectRoles(queues: AppConfig['WORKER_QUEUES'], known: readonly string[]): string[] {
  if (queues === 'all') return [...known];
  return [...new Set(queues)].filter((role) => known.includes(role));
}

/**
 * Consumes the queue of every role of every workflow it knows (WORKFLOWS_DIR, reloaded when
 * the files change), filtered by WORKER_QUEUES. Starts consuming only once Postgres and Redis
 * answer (a worker that takes jobs it cannot record would just burn attempts), and on shutdown
 * stops taking jobs, gives running tasks part of the grace period to finish, then aborts them
 * so they hand their task back.
 */
@Injectable()
export class WorkerLifecycle implements OnApplicationBootstrap, OnModuleDestroy {
  private readinessTimer: NodeJS.Timeout | undefined;
  private readonly workers = new Map<string, Worker>();
  private consuming = false;
  private closing = false;

  constructor(
    private readonly processor: TaskProcessor,
    @Inject(WorkflowCatalog) private readonly catalog: WorkflowCatalog,
    @Inject(TaskQueues) private readonly queues: TaskQueues,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(REDIS) private readonly redis: RedisConnection,
    private readonly shutdown: ShutdownSignal,
  ) {}

  /** The roles consumed now. */
  get roles(): string[] {
    return [...this.workers.keys()].sort();
  }

  async onApplicationBootstrap(): Promise<void> {
    const unknown = this.config.WORKER_QUEUES === 'all' ? [] : this.config.WORKER_QUEUES.filter((role) => !this.catalog.roles().includes(role));
    if (unknown.length) this.logger.warn({ unknown, known: this.catalog.roles() }, 'WORKER_QUEUES names roles no workflow declares (yet)');
    await this.waitUntilReady();
    this.consuming = true;
    this.consumeKnownRoles();
    this.catalog.onChange(() => this.consumeKnownRoles());
    this.catalog.start();
    this.logger.info({ queues: this.roles, concurrency: this.config.WORKER_CONCURRENCY }, 'worker consuming');
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    clearTimeout(this.readinessTimer);
    this.catalog.stop();
    const handBackAfter = Math.floor(this.config.SHUTDOWN_GRACE_MS * 0.6);
    const timer = setTimeout(() => this.shutdown.abort(new Error('worker shutting down')), handBackAfter);
    timer.unref();
    await Promise.all([...this.workers.values()].map((worker) => worker.close()));
    clearTimeout(timer);
    await this.queues.close();
  }

  private consumeKnownRoles(): void {
    if (!this.consuming || this.closing) return;
    for (const role of selectRoles(this.config.WORKER_QUEUES, this.catalog.roles())) {
      if (this.workers.has(role)) continue;
      const worker = new Worker(role, (job, token) => this.processor.process(role, job, token), {
        connection: this.redis,
        prefix: this.config.QUEUE_PREFIX,
        concurrency: this.config.WORKER_CONCURRENCY,
        autorun: false,
      });
      worker.on('error', (error) => this.logger.error({ err: error, queue: role }, 'queue worker error'));
      void worker.run().catch((error: unknown) => this.logger.error({ err: error, queue: role }, 'queue worker stopped'));
      this.workers.set(role, worker);
      this.logger.debug({ queue: role }, 'consuming queue');
    }
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
