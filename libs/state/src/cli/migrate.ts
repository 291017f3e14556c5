import { loadConfigOrExit } from '@switchyard/config';
import { createLogger, describeError } from '@switchyard/observability';
import { MIGRATIONS_FOLDER, migrateDatabase } from '../migrate';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger('migrate', config.LOG_LEVEL);
  // Migrations hold a session advisory lock: behind a transaction pooler they need the direct URL.
  const url = config.MIGRATE_DATABASE_URL ?? config.DATABASE_URL;
  const target = new URL(url);
  logger.info(
    { database: target.pathname.slice(1), host: target.host, folder: MIGRATIONS_FOLDER, via: config.MIGRATE_DATABASE_URL ? 'MIGRATE_DATABASE_URL' : 'DATABASE_URL' },
    'applying migrations',
  );
  if (!config.MIGRATE_DATABASE_URL && config.DATABASE_POOL_MODE === 'transaction') {
    logger.warn('DATABASE_POOL_MODE=transaction and no MIGRATE_DATABASE_URL: migrating through DATABASE_URL, whose pooler may not keep the advisory lock');
  }
  await migrateDatabase(url);
  logger.info('migrations applied');
}

main().catch((error: unknown) => {
  process.stderr.write(`db:migrate failed: ${describeError(error)}\n`);
  process.exit(1);
});
