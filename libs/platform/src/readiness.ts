import type { Pool } from 'pg';
import { describeError } from '@switchyard/observability';
import { MIGRATIONS_FOLDER, pendingMigrations, pingDatabase, type DatabaseHandle } from '@switchyard/state';
import type { RedisConnection } from './redis';

export interface DependencyCheck {
  name: 'postgres' | 'redis' | 'migrations';
  ok: boolean;
  error?: string;
  /** `migrations` only: the shipped migrations the database has not applied. */
  missing?: string[];
}

/**
 * Whether the database has every migration shipped in `migrations/`. Applied migrations are
 * not undone, so once it passes the answer is kept; until then every check asks again.
 */
export class MigrationsReadiness {
  private applied = false;

  constructor(
    private readonly pool: Pick<Pool, 'query'>,
    private readonly migrationsFolder = MIGRATIONS_FOLDER,
  ) {}

  async check(): Promise<DependencyCheck> {
    if (this.applied) return { name: 'migrations', ok: true };
    const missing = await pendingMigrations(this.pool, this.migrationsFolder);
    if (missing.length > 0) {
      return { name: 'migrations', ok: false, missing, error: `the database lacks ${missing.length} migration(s): ${missing.join(', ')}; run \`npm run db:migrate\`` };
    }
    this.applied = true;
    return { name: 'migrations', ok: true };
  }
}

/**
 * Whether Postgres and Redis answer now (and, given `migrations`, whether the schema is
 * current). Used by /readyz and before a worker starts consuming.
 */
export async function checkDependencies(database: DatabaseHandle, redis: RedisConnection, timeoutMs = 2_000, migrations?: MigrationsReadiness): Promise<DependencyCheck[]> {
  const probe = async (name: DependencyCheck['name'], check: () => Promise<DependencyCheck>): Promise<DependencyCheck> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        check(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (error) {
      return { name, ok: false, error: describeError(error) };
    } finally {
      clearTimeout(timer);
    }
  };
  const answers = (name: DependencyCheck['name'], ping: () => Promise<unknown>) => async (): Promise<DependencyCheck> => {
    await ping();
    return { name, ok: true };
  };
  return Promise.all([
    probe('postgres', answers('postgres', () => pingDatabase(database.pool))),
    probe('redis', answers('redis', () => redis.ping())),
    ...(migrations === undefined ? [] : [probe('migrations', () => migrations.check())]),
  ]);
}
