import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { BullModule } from '@nestjs/bullmq';
import type { Redis } from 'ioredis';
import type { AppConfig } from '@switchyard/config';
import type { Logger } from '@switchyard/observability';
import { CoreModule, REDIS } from '@switchyard/platform';
import { ApiKeyGuard } from './auth/api-key.guard';
import { ApiKeyRegistry } from './auth/api-keys';
import { HealthController } from './health/health.controller';
import { HttpExceptionFilter } from './http/http-exception.filter';
import { JobsController } from './jobs/jobs.controller';
import { JobsService } from './jobs/jobs.service';
import { TASK_FLOW_PRODUCER } from './queues/queue.constants';

@Module({})
export class SupervisorModule {
  static forRoot(config: AppConfig, logger?: Logger): DynamicModule {
    return {
      module: SupervisorModule,
      imports: [
        CoreModule.forRoot(config, 'supervisor', logger),
        BullModule.forRootAsync({
          inject: [REDIS],
          useFactory: (redis: Redis) => ({ connection: redis, prefix: config.QUEUE_PREFIX }),
        }),
        BullModule.registerFlowProducer({ name: TASK_FLOW_PRODUCER }),
      ],
      controllers: [JobsController, HealthController],
      providers: [
        JobsService,
        ApiKeyGuard,
        { provide: ApiKeyRegistry, useValue: new ApiKeyRegistry(config.API_KEYS) },
        { provide: APP_FILTER, useClass: HttpExceptionFilter },
      ],
    };
  }
}
