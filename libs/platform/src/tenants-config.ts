import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@switchyard/config';
import type { Logger } from '@switchyard/observability';
import { limitsFor, loadTenantsConfig, type TenantLimits, type TenantsConfig } from '@switchyard/workflows';
import { APP_CONFIG, LOGGER } from './tokens';

const KUBERNETES_DATA_LINK = '..data';

/**
 * `TENANTS_CONFIG` (SPEC §6): read at start (a bad file stops the process, naming the file and
 * the path), then watched like `router.yaml`: a changed file is applied after a short debounce,
 * a file that does not read or validate is rejected and the old limits stay.
 */
@Injectable()
export class TenantsConfigStore implements OnApplicationBootstrap, OnApplicationShutdown {
  private config: TenantsConfig;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly path: string;
  private readonly log: Logger;

  constructor(@Inject(APP_CONFIG) appConfig: AppConfig, @Inject(LOGGER) logger: Logger) {
    this.path = resolve(appConfig.TENANTS_CONFIG);
    this.log = logger.child({ component: 'tenants-config' });
    this.config = loadTenantsConfig(this.path);
  }

  current(): TenantsConfig {
    return this.config;
  }

  limitsOf(tenantId: string): TenantLimits {
    return limitsFor(this.config, tenantId);
  }

  globalRunningLimit(): number {
    return this.config.global.max_running_jobs;
  }

  onApplicationBootstrap(): void {
    const name = basename(this.path);
    this.watcher = watch(dirname(this.path), { persistent: false }, (_event, file) => {
      if (file !== null && file !== name && file !== KUBERNETES_DATA_LINK) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.reloadNow(), 200);
      this.timer.unref();
    });
    this.watcher.on('error', (error) => this.log.error({ err: error, source: this.path }, 'tenants config watcher failed'));
  }

  onApplicationShutdown(): void {
    this.watcher?.close();
    clearTimeout(this.timer);
  }

  /** Reads and applies the file now; returns whether it was applied. */
  reloadNow(): boolean {
    try {
      this.config = loadTenantsConfig(this.path);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.log.error({ source: this.path }, `tenants config rejected, the previous one stays in force: ${reason}`);
      return false;
    }
    this.log.info({ source: this.path, tenants: Object.keys(this.config.tenants ?? {}).length }, 'tenants config reloaded');
    return true;
  }
}
