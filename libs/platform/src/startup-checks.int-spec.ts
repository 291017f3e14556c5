import { freePort } from '@switchyard/devkit';
import { ConfigError, loadConfig } from '@switchyard/config';
import { checkDatabasePoolMode, checkRedisTopology } from './startup-checks';

const SHARED_REDIS = '127.0.0.1:6379';
const DIRECT_DATABASE = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function problemsOf(check: Promise<void>): Promise<ConfigError> {
  try {
    await check;
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('start-up checks of the deployment (real Redis and Postgres)', () => {
  it('names REDIS_CLUSTER_NODES when no seed node answers, never the password from REDIS_URL', async () => {
    const closed = await freePort();
    const error = await problemsOf(checkRedisTopology(loadConfig({ REDIS_URL: 'redis://:hunter2@127.0.0.1:6379', REDIS_CLUSTER_NODES: `127.0.0.1:${closed}` }), 1_000));
    expect(error.problems).toEqual([{ variable: 'REDIS_CLUSTER_NODES', message: `no cluster node answered at 127.0.0.1:${closed}` }]);
    expect(error.message).not.toContain('hunter2');
  });

  it('names REDIS_CLUSTER_NODES when the node answers but is not in cluster mode', async () => {
    const error = await problemsOf(checkRedisTopology(loadConfig({ REDIS_CLUSTER_NODES: SHARED_REDIS }), 1_000));
    expect(error.problems.map((p) => p.variable)).toEqual(['REDIS_CLUSTER_NODES']);
  });

  it('names REDIS_SENTINELS when no listed node answers as a sentinel', async () => {
    const closed = await freePort();
    const error = await problemsOf(checkRedisTopology(loadConfig({ REDIS_SENTINELS: `127.0.0.1:${closed},${SHARED_REDIS}` }), 1_000));
    expect(error.problems).toEqual([{ variable: 'REDIS_SENTINELS', message: `no sentinel answered at 127.0.0.1:${closed}, ${SHARED_REDIS}` }]);
  });

  it('checks nothing for a plain REDIS_URL (the process waits for that Redis as before)', async () => {
    const closed = await freePort();
    await expect(checkRedisTopology(loadConfig({ REDIS_URL: `redis://127.0.0.1:${closed}` }), 1_000)).resolves.toBeUndefined();
  });

  it('accepts transaction pool mode on a direct connection, and session mode on one', async () => {
    await expect(checkDatabasePoolMode({ DATABASE_URL: DIRECT_DATABASE, DATABASE_POOL_MODE: 'transaction' })).resolves.toBeUndefined();
    await expect(checkDatabasePoolMode({ DATABASE_URL: DIRECT_DATABASE, DATABASE_POOL_MODE: 'session' })).resolves.toBeUndefined();
  });
});
