import type { Provider } from '@nestjs/common';
import { secretsFromEnv, type AppConfig } from '@switchyard/config';
import type { Logger } from '@switchyard/observability';
import { APP_CONFIG, LOGGER } from '@switchyard/platform';
import { Router, loadRouterConfig } from '@switchyard/router';

/** The shared router, built from ROUTER_CONFIG; an invalid file stops the worker at boot. */
export const routerProvider: Provider = {
  provide: Router,
  inject: [APP_CONFIG, LOGGER],
  useFactory: (config: AppConfig, logger: Logger) =>
    new Router({
      config: loadRouterConfig(config.ROUTER_CONFIG),
      secrets: secretsFromEnv(),
      logger: logger.child({ component: 'router' }),
    }),
};
