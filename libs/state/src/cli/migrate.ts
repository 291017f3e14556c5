import { loadConfigOrExit } from '@switchyard/config';
import { createLogger, describeError } from '@switchyard/observability';
import { MIGRATIONS_FOLDER, migrateDatabase } from '../migrate';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger('migrate', config.LOG_LEVEL);
  const target = new URL(config.DATABASE_URL);
  logger.info({ database: target.pathname.slice(1), host: target.host, folder: MIGRATIONS_FOLDER }, 'applying migrations');
  await migrateDatabase(config.DATABASE_URL);
  logger.info('migrations applied');
}

main().catch((error: unknown) => {
  process.stderr.write(`db:migrate failed: ${describeError(error)}\n`);
  process.exit(1);
});
