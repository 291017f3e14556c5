import { randomBytes } from 'node:crypto';
import { connectDatabase, type DatabaseHandle } from '../database';
import { dropDatabase, migrateDatabase } from '../migrate';

const BASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase extends DatabaseHandle {
  url: string;
  /** Closes the pool and drops the database. */
  destroy(): Promise<void>;
}

/**
 * A fresh database with the real migrations, for one test file. The name is random so
 * that parallel runs and earlier leftovers never meet.
 */
export async function createTestDatabase(baseUrl = process.env.TEST_DATABASE_URL ?? BASE_URL): Promise<TestDatabase> {
  const url = new URL(baseUrl);
  url.pathname = `/switchyard_test_${randomBytes(6).toString('hex')}`;
  const testUrl = url.toString();
  await migrateDatabase(testUrl);
  const handle = connectDatabase(testUrl, { max: 8, application_name: 'switchyard-test' });
  return {
    ...handle,
    url: testUrl,
    async destroy() {
      await handle.close();
      await dropDatabase(testUrl);
    },
  };
}
