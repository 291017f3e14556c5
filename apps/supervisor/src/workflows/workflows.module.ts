import { Global, Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { AppConfig } from '@switchyard/config';
import type { Logger } from '@switchyard/observability';
import { TaskQueues, WorkflowCatalog } from '@switchyard/orchestration';
import { APP_CONFIG, LOGGER, REDIS } from '@switchyard/platform';

/** The job types (WORKFLOWS_DIR, hot-reloaded) and the role queues every producer enqueues to. */
@Global()
@Module({
  providers: [
    {
      provide: WorkflowCatalog,
      inject: [APP_CONFIG, LOGGER],
      useFactory: (config: AppConfig, logger: Logger) => new WorkflowCatalog({ dir: config.WORKFLOWS_DIR, logger: logger.child({ component: 'workflows' }) }),
    },
    {
      provide: TaskQueues,
      inject: [REDIS, APP_CONFIG],
      useFactory: (redis: Redis, config: AppConfig) => new TaskQueues(redis, config.QUEUE_PREFIX, { maxAttempts: config.TASK_MAX_ATTEMPTS }),
    },
  ],
  exports: [WorkflowCatalog, TaskQueues],
})
export class WorkflowsModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(WorkflowCatalog) private readonly catalog: WorkflowCatalog,
    @Inject(TaskQueues) private readonly queues: TaskQueues,
  ) {}

  onModuleInit(): void {
    this.catalog.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.catalog.stop();
    await this.queues.close();
  }
}
