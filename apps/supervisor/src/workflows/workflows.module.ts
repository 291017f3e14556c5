import { Global, Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '@switchyard/config';
import type { Logger } from '@switchyard/observability';
import { TaskQueues, WorkflowCatalog } from '@switchyard/orchestration';
import { APP_CONFIG, LOGGER, REDIS, type RedisConnection } from '@switchyard/platform';
import { REQUEST_REDIS } from '../queues/request-redis.module';

/** The role queues on the fail-fast request connection, for submissions. */
export const SUBMISSION_QUEUES = Symbol('SUBMISSION_QUEUES');

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
      useFactory: (redis: RedisConnection, config: AppConfig) => new TaskQueues(redis, config.QUEUE_PREFIX, { maxAttempts: config.TASK_MAX_ATTEMPTS }),
    },
    {
      provide: SUBMISSION_QUEUES,
      inject: [REQUEST_REDIS, APP_CONFIG],
      useFactory: (redis: RedisConnection, config: AppConfig) => new TaskQueues(redis, config.QUEUE_PREFIX, { maxAttempts: config.TASK_MAX_ATTEMPTS }),
    },
  ],
  exports: [WorkflowCatalog, TaskQueues, SUBMISSION_QUEUES],
})
export class WorkflowsModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(WorkflowCatalog) private readonly catalog: WorkflowCatalog,
    @Inject(TaskQueues) private readonly queues: TaskQueues,
    @Inject(SUBMISSION_QUEUES) private readonly submissionQueues: TaskQueues,
  ) {}

  onModuleInit(): void {
    const open = () => {
      this.queues.open(this.catalog.roles());
      this.submissionQueues.open(this.catalog.roles());
    };
    open();
    this.catalog.onChange(open);
    this.catalog.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.catalog.stop();
    await Promise.all([this.queues.close(), this.submissionQueues.close()]);
  }
}
