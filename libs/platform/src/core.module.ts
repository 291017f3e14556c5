import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@switchyard/config';
import { createLogger, type Logger } from '@switchyard/observability';
import { JobRepository, TaskLeaseRepository, connectDatabase, type DatabaseHandle } from '@switchyard/state';
import { logConnectionErrors } from './connection-errors';
import { connectRedis, type RedisConnection } from './redis';
import { TenantsConfigStore } from './tenants-config';
import { APP_CONFIG, DATABASE, LOGGER, REDIS } from './tokens';

/**
 * The singletons every Switchyard process shares: the parsed config, the logger, one
 * Postgres pool, one Redis connection, the task repository and the tenants config (limits and
 * budgets, reloaded on change). Closed on shutdown.
 */
@Global()
@Module({})
export class CoreModule implements OnApplicationShutdown {
  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(REDIS) private readonly redis: RedisConnection,
  ) {}

  static forRoot(config: AppConfig, service: string, logger: Logger = createLogger(service, config.LOG_LEVEL)): DynamicModule {
    return {
      module: CoreModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        {
          provide: DATABASE,
          useFactory: () => connectDatabase(config.DATABASE_URL, { max: config.DATABASE_POOL_SIZE, application_name: `switchyard-${service}`, poolMode: config.DATABASE_POOL_MODE }),
        },
        {
          provide: REDIS,
          useFactory: () => {
            const redis = connectRedis(config, `switchyard-${service}`);
            logConnectionErrors(redis, logger, { component: 'redis', connection: `switchyard-${service}` });
            return redis;
          },
        },
        { provide: JobRepository, useFactory: (db: DatabaseHandle) => new JobRepository(db.db, db.pool), inject: [DATABASE] },
        { provide: TaskLeaseRepository, useFactory: (db: DatabaseHandle) => new TaskLeaseRepository(db.db, db.pool), inject: [DATABASE] },
        TenantsConfigStore,
      ],
      exports: [APP_CONFIG, LOGGER, DATABASE, REDIS, JobRepository, TaskLeaseRepository, TenantsConfigStore],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([this.database.close(), this.redis.quit()]);
  }
}
