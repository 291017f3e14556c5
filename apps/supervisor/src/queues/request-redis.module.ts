import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@switchyard/config';
import { APP_CONFIG, connectRequestRedis, type RedisConnection } from '@switchyard/platform';

/** The supervisor's fail-fast Redis connection for request paths (submissions, gateway records). */
export const REQUEST_REDIS = Symbol('REQUEST_REDIS');

@Global()
@Module({
  providers: [
    {
      provide: REQUEST_REDIS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => connectRequestRedis(config, 'switchyard-supervisor-requests', config.REDIS_REQUEST_TIMEOUT_MS),
    },
  ],
  exports: [REQUEST_REDIS],
})
export class RequestRedisModule implements OnApplicationShutdown {
  constructor(@Inject(REQUEST_REDIS) private readonly redis: RedisConnection) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
