import type { INestApplicationContext } from '@nestjs/common';
import type { Logger } from '@switchyard/observability';

/**
 * SIGTERM/SIGINT close the Nest app (workers stop taking jobs and finish or hand back what
 * they hold; connections close), then run `after`. A second signal, or the grace period
 * running out, exits at once.
 */
export function closeOnSignals(app: INestApplicationContext, logger: Logger, graceMs: number, after: () => Promise<void> = async () => undefined): void {
  let closing = false;
  const handler = (signal: NodeJS.Signals) => {
    if (closing) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    closing = true;
    logger.info({ signal, grace_ms: graceMs }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error({ grace_ms: graceMs }, 'shutdown grace period exceeded: exiting');
      process.exit(1);
    }, graceMs);
    deadline.unref();
    app
      .close()
      .then(after)
      .then(
        () => {
          logger.info('shut down cleanly');
          process.exit(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'error during shutdown');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
