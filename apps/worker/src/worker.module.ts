import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from '@switchyard/config';
import type { Logger } from '@switchyard/observability';
import { IdempotentModelRouter, TaskQueues, TaskRunner, WorkflowCatalog, WorkflowVersions } from '@switchyard/orchestration';
import { APP_CONFIG, CoreModule, DATABASE, DurableLedgerRows, LOGGER, LedgerModule, REDIS, RouterRuntime, queueErrorLogger, routerProvider, type RedisConnection } from '@switchyard/platform';
import { Router } from '@switchyard/router';
import { AttemptLedgerRepository, GroupCommittedAttemptLedger, GroupCommittedCallResults, ModelCallResultRepository, TaskLeaseRepository, type DatabaseHandle } from '@switchyard/state';
import { ShutdownSignal } from './processors/shutdown-signal';
import { TaskProcessor } from './processors/task.processor';
import { WorkerMetrics } from './metrics/worker-metrics';
import { WorkerLifecycle } from './processors/worker-lifecycle.service';

@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig, logger?: Logger): DynamicModule {
    const workerId = config.WORKER_ID ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    return {
      module: WorkerModule,
      imports: [CoreModule.forRoot(config, 'worker', logger?.child({ worker_id: workerId })), LedgerModule.forRoot('worker')],
      providers: [
        routerProvider,
        RouterRuntime,
        ShutdownSignal,
        {
          provide: WorkflowCatalog,
          inject: [LOGGER],
          useFactory: (log: Logger) => new WorkflowCatalog({ dir: config.WORKFLOWS_DIR, logger: log.child({ component: 'workflows' }) }),
        },
        {
          provide: TaskQueues,
          inject: [REDIS, LOGGER],
          useFactory: (redis: RedisConnection, logger: Logger) =>
            new TaskQueues(redis, config.QUEUE_PREFIX, { maxAttempts: config.TASK_MAX_ATTEMPTS }, queueErrorLogger(logger)),
        },
        {
          provide: TaskRunner,
          inject: [TaskLeaseRepository, Router, DATABASE, APP_CONFIG, LOGGER, TaskQueues, DurableLedgerRows, WorkerMetrics],
          useFactory: (
            tasks: TaskLeaseRepository,
            router: Router,
            database: DatabaseHandle,
            appConfig: AppConfig,
            log: Logger,
            queues: TaskQueues,
            durableRows: DurableLedgerRows,
            metrics: WorkerMetrics,
          ) =>
            new TaskRunner({
              tasks,
              // Paid-once: a step replayed after a crash reuses the answer its first run stored;
              // each upstream attempt's ledger row is written before its request is sent. The
              // concurrent tasks' lookups and writes are group-committed (one statement per batch).
              router: new IdempotentModelRouter(
                router,
                new GroupCommittedCallResults(new ModelCallResultRepository(database.db, database.pool)),
                { ledger: new GroupCommittedAttemptLedger(new AttemptLedgerRepository(database.db, database.pool)), onRowsWritten: (rows) => durableRows.add(rows) },
              ),
              versions: new WorkflowVersions(),
              enqueue: (ready) => queues.enqueue(ready),
              workerId,
              logger: log,
              heartbeatMs: appConfig.HEARTBEAT_MS,
              maxTargetWaitMs: appConfig.TARGET_WAIT_MAX_MS,
              optionalTargetWaitMs: appConfig.OPTIONAL_TARGET_WAIT_MS,
              observeStep: metrics.stepRan,
              mayUseCloud: (meta) => {
                const targets = router.config.targetsByName;
                return router.explain(meta).candidates.some((candidate) => candidate.eligible && targets.get(candidate.target)?.type === 'cloud');
              },
            }),
        },
        WorkerMetrics,
        TaskProcessor,
        WorkerLifecycle,
      ],
    };
  }
}
