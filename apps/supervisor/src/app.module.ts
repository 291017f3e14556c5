import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { AppConfig } from '@switchyard/config';
import type { Logger } from '@switchyard/observability';
import { CoreModule, DATABASE, LedgerModule, RouterRuntime, routerProvider } from '@switchyard/platform';
import { AdmissionRepository, JobWatchRepository, TenantBudgetRepository, WebhookOutboxRepository, type DatabaseHandle } from '@switchyard/state';
import { AdmissionService } from './admission/admission.service';
import { JOB_STARTER, QueueJobStarter } from './admission/job-starter';
import { AdminJobsController } from './admin/jobs.controller';
import { AdminTargetsController } from './admin/targets.controller';
import { AdminTasksController } from './admin/tasks.controller';
import { AdminTokenGuard } from './auth/admin-token.guard';
import { ApiKeyGuard } from './auth/api-key.guard';
import { ApiKeyRegistry } from './auth/api-keys';
import { CostsModule } from './costs/costs.module';
import { ChatCompletionsRoute } from './gateway/chat-completions.route';
import { ModelsController } from './gateway/models.controller';
import { GatewayService } from './gateway/gateway.service';
import { HealthController } from './health/health.controller';
import { HttpExceptionFilter } from './http/http-exception.filter';
import { JobsController } from './jobs/jobs.controller';
import { JobEventsService } from './jobs/job-events.service';
import { JobsService } from './jobs/jobs.service';
import { FleetMetrics } from './metrics/fleet.metrics';
import { MetricsModule } from './metrics/metrics.module';
import { OpenApiController } from './openapi/openapi.controller';
import { JobNotifications } from './notifications/job-notifications';
import { JobWatches } from './notifications/job-watches';
import { RequestRedisModule } from './queues/request-redis.module';
import { SweeperModule } from './sweeper/sweeper.module';
import { WebhookDeliveryService } from './webhooks/webhook-delivery.service';
import { WorkflowsController } from './workflows/workflows.controller';
import { WorkflowsModule } from './workflows/workflows.module';

@Module({})
export class SupervisorModule {
  static forRoot(config: AppConfig, logger?: Logger): DynamicModule {
    return {
      module: SupervisorModule,
      imports: [
        CoreModule.forRoot(config, 'supervisor', logger),
        LedgerModule.forRoot('gateway'),
        CostsModule,
        MetricsModule,
        RequestRedisModule,
        WorkflowsModule,
        SweeperModule,
      ],
      controllers: [JobsController, WorkflowsController, HealthController, AdminTasksController, ModelsController, AdminTargetsController, AdminJobsController, OpenApiController],
      providers: [
        JobsService,
        JobEventsService,
        JobNotifications,
        JobWatches,
        { provide: JobWatchRepository, inject: [DATABASE], useFactory: (db: DatabaseHandle) => new JobWatchRepository(db.db) },
        { provide: AdmissionRepository, inject: [DATABASE], useFactory: (db: DatabaseHandle) => new AdmissionRepository(db.db, db.pool) },
        { provide: WebhookOutboxRepository, inject: [DATABASE], useFactory: (db: DatabaseHandle) => new WebhookOutboxRepository(db.db) },
        { provide: TenantBudgetRepository, inject: [DATABASE], useFactory: (db: DatabaseHandle) => new TenantBudgetRepository(db.db) },
        { provide: JOB_STARTER, useClass: QueueJobStarter },
        AdmissionService,
        WebhookDeliveryService,
        routerProvider,
        RouterRuntime,
        // Needs the router, so it lives beside it rather than in MetricsModule.
        FleetMetrics,
        GatewayService,
        ChatCompletionsRoute,
        AdminTokenGuard,
        ApiKeyGuard,
        { provide: ApiKeyRegistry, useValue: new ApiKeyRegistry(config.API_KEYS) },
        { provide: APP_FILTER, useClass: HttpExceptionFilter },
      ],
    };
  }
}
