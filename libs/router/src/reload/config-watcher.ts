import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { Logger } from '@switchyard/observability';
import type { CompiledRouterConfig } from '../config/compile-router-config';
import { loadRouterConfig } from '../config/router-config.loader';

const KUBERNETES_DATA_LINK = '..data';

export interface ConfigWatcherOptions {
  filePath: string;
  apply: (config: CompiledRouterConfig) => void;
  logger: Logger;
  debounceMs?: number;
  /** Defaults to reading and validating the file. */
  load?: (filePath: string) => CompiledRouterConfig;
}

/**
 * Watches the router config file (its directory, so that editors that replace the file and
 * Kubernetes ConfigMap updates are seen) and applies a changed file after a short debounce.
 * A file that does not read or validate is rejected with a message naming the path and the
 * problem; the old config stays.
 */
export class RouterConfigWatcher {
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly path: string;

  constructor(private readonly options: ConfigWatcherOptions) {
    this.path = resolve(options.filePath);
  }

  start(): void {
    if (this.watcher !== undefined) return;
    const name = basename(this.path);
    this.watcher = watch(dirname(this.path), { persistent: false }, (_event, file) => {
      // `..data` is how a Kubernetes ConfigMap volume changes: the file is a symlink through
      // `..data`, and an update swaps that symlink, never touching the file's own entry.
      if (file !== null && file !== name && file !== KUBERNETES_DATA_LINK) return;
      this.schedule();
    });
    this.watcher.on('error', (error) => this.options.logger.error({ err: error, source: this.path }, 'router config watcher failed'));
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = undefined;
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  /** Reads, validates and applies the file now. Returns whether it was applied. */
  reloadNow(): boolean {
    const load = this.options.load ?? loadRouterConfig;
    let config: CompiledRouterConfig;
    try {
      config = load(this.path);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.options.logger.error({ source: this.path, err: error }, `router config ${this.path} rejected, the previous config stays in force: ${reason}`);
      return false;
    }
    this.options.apply(config);
    for (const warning of config.warnings) this.options.logger.warn({ source: this.path }, `router config: ${warning}`);
    this.options.logger.info({ source: this.path, targets: config.targets.map((t) => t.name), routes: config.rules.length }, 'router config reloaded');
    return true;
  }

  private schedule(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.reloadNow();
    }, this.options.debounceMs ?? 200);
    this.timer.unref();
  }
}
