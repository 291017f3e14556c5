import IORedis, { Cluster, type ClusterOptions, type Redis, type RedisOptions } from 'ioredis';
import type { AppConfig, RedisNodeAddress } from '@switchyard/config';
import { keyPatternsOf } from './redis-keys';

/** A connection to whatever REDIS_* describe: one server or a Sentinel-watched primary (`Redis`), or a `Cluster`. */
export type RedisConnection = Redis | Cluster;

export type RedisSettings = Pick<AppConfig, 'REDIS_URL' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_MASTER' | 'REDIS_CLUSTER_NODES'>;

export type RedisTopology =
  | { kind: 'standalone'; url: string }
  | { kind: 'sentinel'; url: string; sentinels: RedisNodeAddress[]; masterName: string }
  | { kind: 'cluster'; url: string; nodes: RedisNodeAddress[] };

export function redisTopologyFrom(settings: RedisSettings): RedisTopology {
  if (settings.REDIS_CLUSTER_NODES) return { kind: 'cluster', url: settings.REDIS_URL, nodes: settings.REDIS_CLUSTER_NODES };
  if (settings.REDIS_SENTINELS) return { kind: 'sentinel', url: settings.REDIS_URL, sentinels: settings.REDIS_SENTINELS, masterName: settings.REDIS_SENTINEL_MASTER };
  return { kind: 'standalone', url: settings.REDIS_URL };
}

const reconnectBackoff = (times: number) => Math.min(100 * 2 ** times, 2_000);

/** What REDIS_URL says besides its host when Sentinel or Cluster names the servers: credentials, db, TLS. */
function urlOptions(url: string): Pick<RedisOptions, 'username' | 'password' | 'db' | 'tls'> {
  const parsed = new URL(url);
  const db = parsed.pathname.replace(/^\//, '');
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(db ? { db: Number(db) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/**
 * After a failover the old primary may come back as a replica while a client still holds a
 * connection to it: reconnect (asking the sentinels again) and resend the command.
 */
const reconnectOnReadOnly = (error: Error): 2 | false => (error.message.startsWith('READONLY') ? 2 : false);

/**
 * ioredis ends a connection for good — every later command fails with "Connection is closed." —
 * when it is told to disconnect while a reconnect is still finding out where to connect. Sentinel's
 * failover detector does exactly that when `+switch-master` arrives during a reconnect, which a
 * slow failover under load makes likely (the Sentinel drill once saw the supervisor's command
 * connection stay closed for minutes after a 24 s failover; ioredis#1683 reports the same). A
 * connection that ends without having been closed on purpose connects again, with the same
 * backoff, and so does every duplicate made from it (BullMQ's blocking connections included).
 */
export function reconnectAfterUnexpectedEnd(redis: Redis): Redis {
  let closedOnPurpose = false;
  let attempts = 0;
  const quit = redis.quit.bind(redis);
  const disconnect = redis.disconnect.bind(redis);
  const duplicate = redis.duplicate.bind(redis);
  Object.assign(redis, {
    quit: (...args: Parameters<Redis['quit']>) => {
      closedOnPurpose = true;
      return quit(...args);
    },
    disconnect: (reconnect = false) => {
      if (!reconnect) closedOnPurpose = true;
      disconnect(reconnect);
    },
    duplicate: (...args: Parameters<Redis['duplicate']>) => reconnectAfterUnexpectedEnd(duplicate(...args)),
  });
  redis.on('ready', () => (attempts = 0));
  redis.on('end', () => {
    if (closedOnPurpose) return;
    attempts += 1;
    setTimeout(() => {
      if (!closedOnPurpose && redis.status === 'end') redis.connect().catch(() => undefined);
    }, reconnectBackoff(attempts)).unref();
  });
  return redis;
}

function connect(topology: RedisTopology, perServer: RedisOptions, cluster: Pick<ClusterOptions, 'enableOfflineQueue'> = {}): RedisConnection {
  const common: RedisOptions = { ...perServer, enableReadyCheck: true, retryStrategy: reconnectBackoff };
  switch (topology.kind) {
    case 'standalone':
      return reconnectAfterUnexpectedEnd(new IORedis(topology.url, common));
    case 'sentinel': {
      const fromUrl = urlOptions(topology.url);
      return reconnectAfterUnexpectedEnd(new IORedis({
        ...common,
        ...fromUrl,
        sentinels: topology.sentinels,
        name: topology.masterName,
        // rediss:// means TLS to the sentinels and to the servers they name.
        ...(fromUrl.tls ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
        sentinelRetryStrategy: reconnectBackoff,
        // Subscribes to the sentinels' +switch-master: a promotion is followed at once, not at the next broken socket.
        failoverDetector: true,
        reconnectOnError: reconnectOnReadOnly,
      }));
    }
    case 'cluster': {
      const { db: _db, ...fromUrl } = urlOptions(topology.url);
      return new Cluster(topology.nodes, {
        ...cluster,
        redisOptions: { ...common, ...fromUrl },
        enableReadyCheck: true,
        clusterRetryStrategy: reconnectBackoff,
        // Managed clusters (ElastiCache, Memorystore) announce addresses that TLS must verify as given.
        dnsLookup: (address, callback) => callback(null, address),
      });
    }
  }
}

/**
 * The process's one command connection (BullMQ duplicates it where it needs a blocking
 * one). `maxRetriesPerRequest: null` is what BullMQ requires; reconnects back off to 2 s.
 * Its commands wait for Redis however long it is away: fine for workers and sweeps, never
 * for a request someone is waiting on (see `connectRequestRedis`).
 */
export function connectRedis(settings: RedisSettings, name: string): RedisConnection {
  return connect(redisTopologyFrom(settings), { connectionName: name, maxRetriesPerRequest: null });
}

/**
 * A connection for request paths (enqueueing a submission, the gateway's idempotency records
 * and cache). While Redis is away a command fails at once instead of waiting in ioredis's
 * offline queue for the whole outage (and landing late, after the client gave up); a command
 * sent to a Redis that stopped answering fails after `commandTimeoutMs`.
 */
export function connectRequestRedis(settings: RedisSettings, name: string, commandTimeoutMs: number): RedisConnection {
  return connect(
    redisTopologyFrom(settings),
    { connectionName: name, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: commandTimeoutMs },
    { enableOfflineQueue: false },
  );
}

/** Another connection like `redis` (same servers, same options) under its own client name, e.g. for a subscriber. */
export function duplicateConnection(redis: RedisConnection, name: string): RedisConnection {
  if (redis instanceof Cluster) {
    return redis.duplicate(undefined, { redisOptions: { ...redis.options.redisOptions, connectionName: name } });
  }
  return redis.duplicate({ connectionName: name });
}

/** The client name a connection was opened with. */
export function connectionNameOf(redis: RedisConnection): string | undefined {
  return redis instanceof Cluster ? redis.options.redisOptions?.connectionName : redis.options.connectionName;
}

/** The primaries that hold the data: every master of a cluster, else the connection itself. */
export function dataNodesOf(redis: RedisConnection): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/** Thrown by `withDeadline` when the work did not finish in time. */
export class DeadlineExceededError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not finish within ${ms} ms`);
    this.name = 'DeadlineExceededError';
  }
}

/**
 * `work`, or a `DeadlineExceededError` after `ms`: the caller stops waiting (the work itself
 * may still finish later; request-path connections make sure it does not linger).
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceededError(what, ms)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Deletes every key of a QUEUE_PREFIX (a test's, a demo's or a bench's own) — BullMQ's and
 * every feature's (see `redis-keys.ts`) — on every primary, in pages.
 */
export async function deleteKeysWithPrefix(redis: RedisConnection, queuePrefix: string): Promise<number> {
  // A cluster knows its masters once it has loaded the slot map.
  if (redis instanceof Cluster && redis.status !== 'ready') await withDeadline(new Promise((resolve) => redis.once('ready', resolve)), 10_000, 'connecting to the Redis Cluster');
  let deleted = 0;
  for (const node of dataNodesOf(redis)) {
    for (const pattern of keyPatternsOf(queuePrefix)) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        // One UNLINK per key (pipelined): in a cluster a multi-key UNLINK must stay in one slot.
        const results = keys.length ? await keys.reduce((pipeline, key) => pipeline.unlink(key), node.pipeline()).exec() : [];
        deleted += (results ?? []).filter(([error, count]) => error === null && count === 1).length;
        cursor = next;
      } while (cursor !== '0');
    }
  }
  return deleted;
}
