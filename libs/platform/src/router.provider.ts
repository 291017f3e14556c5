import type { Provider } from '@nestjs/common';
import { secretsFromEnv, type AppConfig } from '@switchyard/config';
import type { Logger } from '@switchyard/observability';
import { APP_CONFIG, LOGGER } from './tokens';
import { Router, loadRouterConfig } from '@switchyard/router';

/** The shared router, built from ROUTER_CONFIG; an invalid file stops the worker at boot. */
export const routerProvider: Provider = {
  provide: Router,
  inject: [APP_CONFIG, LOGGER],
  useFactory: (config: AppConfig, logger: Logger) => {
    const routerConfig = loadRouterConfig(config.ROUTER_CONFIG);
    const log = logger.child({ component: 'router' });
    for (const warning of routerConfig.warnings) log.warn({ source: routerConfig.source }, `router config: ${warning}`);
    log.info({ source: routerConfig.source, targets: routerConfig.targets.map((t) => t.name), routes: routerConfig.rules.length }, 'router config loaded');
    return new Router({ config: routerConfig, secrets: secretsFromEnv(), logger: log });
  },
};
