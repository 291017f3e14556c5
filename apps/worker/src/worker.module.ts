import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Module, type DynamicModule } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import type { Redis } from 'ioredis';
import type { AppConfig } from '@switchyard/config';
import { AGENT_ROLES, AgentRoleSchema, type AgentRole } from '@switchyard/contracts';
import type { Logger } from '@switchyard/observability';
import { IdempotentModelRouter, TaskRunner, agentRegistry } from '@switchyard/orchestration';
import { APP_CONFIG, CoreModule, DATABASE, DurableLedgerRows, LOGGER, LedgerModule, REDIS, RouterRuntime, routerProvider } from '@switchyard/platform';
import { Router } from '@switchyard/router';
import { AttemptLedgerRepository, ModelCallResultRepository, TaskRepository, type DatabaseHandle } from '@switchyard/state';
import { PROCESSORS_BY_ROLE } from './processors/role.processors';
import { ShutdownSignal } from './processors/shutdown-signal';
import type { TaskProcessor } from './processors/task.processor';
import { TASK_WORKERS, WorkerLifecycle, type WorkerOwner } from './processors/worker-lifecycle.service';


/** WORKER_QUEUES → the roles this process consumes; an unknown role stops the process. */
export function selectRoles(queues: AppConfig['WORKER_QUEUES']): AgentRole[] {
  if (queues === 'all') return [...AGENT_ROLES];
  const roles = queues.map((q) => {
    const parsed = AgentRoleSchema.safeParse(q);
    if (!parsed.success) throw new Error(`WORKER_QUEUES: unknown queue "${q}"; known: ${AGENT_ROLES.join(', ')}`);
    return parsed.data;
  });
  return [...new Set(roles)];
}

@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig, logger?: Logger): DynamicModule {
    const roles = selectRoles(config.WORKER_QUEUES);
    const agents = agentRegistry();
    const processors = roles.map((role) => PROCESSORS_BY_ROLE[role]);
    const workerId = config.WORKER_ID ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    return {
      module: WorkerModule,
      imports: [
        CoreModule.forRoot(config, 'worker', logger?.child({ worker_id: workerId })),
        LedgerModule.forRoot('worker'),
        BullModule.forRootAsync({
          inject: [REDIS],
          useFactory: (redis: Redis) => ({ connection: redis, prefix: config.QUEUE_PREFIX }),
        }),
        ...roles.map((role) => BullModule.registerQueue({ name: role })),
      ],
      providers: [
        routerProvider,
        RouterRuntime,
        ShutdownSignal,
        {
          provide: TaskRunner,
          inject: [TaskRepository, Router, DATABASE, APP_CONFIG, LOGGER, DurableLedgerRows],
          useFactory: (tasks: TaskRepository, router: Router, database: DatabaseHandle, appConfig: AppConfig, log: Logger, durableRows: DurableLedgerRows) =>
            new TaskRunner({
              tasks,
              // Paid-once: a step replayed after a crash reuses the answer its first run stored;
              // each upstream attempt's ledger row is written before its request is sent.
              router: new IdempotentModelRouter(
                router,
                new ModelCallResultRepository(database.db, database.pool),
                { ledger: new AttemptLedgerRepository(database.db, database.pool), onRowsWritten: (rows) => durableRows.add(rows) },
              ),
              agents,
              workerId,
              logger: log,
              heartbeatMs: appConfig.HEARTBEAT_MS,
              maxTargetWaitMs: appConfig.TARGET_WAIT_MAX_MS,
            }),
        },
        ...processors,
        {
          provide: TASK_WORKERS,
          inject: processors,
          // The processors themselves: their BullMQ worker exists only after module init.
          useFactory: (...instances: TaskProcessor[]): WorkerOwner[] => instances,
        },
        WorkerLifecycle,
      ],
    };
  }
}
