import type { Redis } from 'ioredis';
import { pingDatabase, type DatabaseHandle } from '@switchyard/state';

export interface DependencyCheck {
  name: 'postgres' | 'redis';
  ok: boolean;
  error?: string;
}

/** Whether Postgres and Redis answer now. Used by /readyz and before a worker starts consuming. */
export async function checkDependencies(database: DatabaseHandle, redis: Redis, timeoutMs = 2_000): Promise<DependencyCheck[]> {
  const probe = async (name: DependencyCheck['name'], fn: () => Promise<unknown>): Promise<DependencyCheck> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        fn(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      return { name, ok: true };
    } catch (error) {
      return { name, ok: false, error: error instanceof Error ? error.message : String(error) };
    } finally {
      clearTimeout(timer);
    }
  };
  return Promise.all([probe('postgres', () => pingDatabase(database.pool)), probe('redis', () => redis.ping())]);
}
