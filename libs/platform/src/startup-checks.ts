import IORedis from 'ioredis';
import { ConfigError, type AppConfig, type RedisNodeAddress } from '@switchyard/config';
import { servedByTransactionPooler } from '@switchyard/state';
import type { RedisSettings } from './redis';

const describeNodes = (nodes: RedisNodeAddress[]): string => nodes.map((n) => `${n.host}:${n.port}`).join(', ');

/** One short-lived probe connection: no retries, no offline queue; TLS (and, for data nodes, credentials) from REDIS_URL. */
async function askNode<T>(
  node: RedisNodeAddress,
  timeoutMs: number,
  ask: (client: IORedis) => Promise<T>,
  redisUrl: string,
  withCredentials: boolean,
): Promise<{ answer?: T; error?: Error }> {
  const fromUrl = new URL(redisUrl);
  const client = new IORedis({
    host: node.host,
    port: node.port,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    ...(withCredentials && fromUrl.username ? { username: decodeURIComponent(fromUrl.username) } : {}),
    ...(withCredentials && fromUrl.password ? { password: decodeURIComponent(fromUrl.password) } : {}),
    ...(fromUrl.protocol === 'rediss:' ? { tls: {} } : {}),
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return { answer: await ask(client) };
  } catch (error) {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  } finally {
    client.disconnect();
  }
}

/**
 * At start, with Sentinel or Cluster configured: at least one listed node answers as what
 * it is said to be. Otherwise a ConfigError naming the variable (and the addresses, never
 * the password). A plain REDIS_URL is not checked here: the process waits for that Redis.
 */
export async function checkRedisTopology(settings: RedisSettings, timeoutMs = 3_000): Promise<void> {
  if (settings.REDIS_SENTINELS) {
    const sentinels = settings.REDIS_SENTINELS;
    const answers = await Promise.all(
      sentinels.map((node) => askNode(node, timeoutMs, (c) => c.call('SENTINEL', 'get-master-addr-by-name', settings.REDIS_SENTINEL_MASTER), settings.REDIS_URL, false)),
    );
    if (answers.some((a) => Array.isArray(a.answer))) return;
    if (answers.some((a) => a.error === undefined)) {
      throw new ConfigError([{ variable: 'REDIS_SENTINEL_MASTER', message: `no sentinel at ${describeNodes(sentinels)} knows a master named "${settings.REDIS_SENTINEL_MASTER}"` }]);
    }
    throw new ConfigError([{ variable: 'REDIS_SENTINELS', message: `no sentinel answered at ${describeNodes(sentinels)}` }]);
  }
  if (settings.REDIS_CLUSTER_NODES) {
    const nodes = settings.REDIS_CLUSTER_NODES;
    const answers = await Promise.all(nodes.map((node) => askNode(node, timeoutMs, (c) => c.call('CLUSTER', 'INFO'), settings.REDIS_URL, true)));
    if (answers.some((a) => typeof a.answer === 'string' && a.answer.includes('cluster_state:'))) return;
    throw new ConfigError([{ variable: 'REDIS_CLUSTER_NODES', message: `no cluster node answered at ${describeNodes(nodes)}` }]);
  }
}

/**
 * DATABASE_POOL_MODE=session behind a transaction pooler breaks on the first named statement
 * that lands on another server session: caught here when it can be (see
 * `servedByTransactionPooler`). An unreachable database is left to the usual readiness path.
 */
export async function checkDatabasePoolMode(config: Pick<AppConfig, 'DATABASE_URL' | 'DATABASE_POOL_MODE'>): Promise<void> {
  if (config.DATABASE_POOL_MODE !== 'session') return;
  const pooled = await servedByTransactionPooler(config.DATABASE_URL).catch(() => false);
  if (pooled) {
    throw new ConfigError([
      {
        variable: 'DATABASE_POOL_MODE',
        message: 'is session, but DATABASE_URL leads to a transaction pooler (one client\'s statements ran on different server sessions): set DATABASE_POOL_MODE=transaction',
      },
    ]);
  }
}

/** For process entry points: a topology or pool mode that cannot work ends the process with a message naming the variable. */
export async function checkDeploymentOrExit(config: AppConfig): Promise<void> {
  try {
    await checkRedisTopology(config);
    await checkDatabasePoolMode(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`switchyard: ${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
}
