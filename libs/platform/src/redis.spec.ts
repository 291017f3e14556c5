import { Cluster } from 'ioredis';
import { loadConfig } from '@switchyard/config';
import { connectRedis, connectRequestRedis, connectionNameOf, duplicateConnection, redisTopologyFrom, type RedisConnection } from './redis';

describe('Redis connection factory', () => {
  const opened: RedisConnection[] = [];
  const open = (connection: RedisConnection): RedisConnection => {
    connection.on('error', () => undefined);
    opened.push(connection);
    return connection;
  };
  afterEach(async () => {
    // Wait for each to end: a connection still retrying in the background would keep jest alive.
    await Promise.all(
      opened.splice(0).map(async (connection) => {
        const ended = connection.status === 'end' ? Promise.resolve() : new Promise((resolve) => connection.once('end', resolve));
        connection.disconnect();
        await ended;
      }),
    );
  });

  it('chooses the topology from the variables: one server, Sentinel or Cluster', () => {
    expect(redisTopologyFrom(loadConfig({})).kind).toBe('standalone');
    expect(redisTopologyFrom(loadConfig({ REDIS_SENTINELS: 's1:26379' }))).toMatchObject({ kind: 'sentinel', masterName: 'mymaster', sentinels: [{ host: 's1', port: 26379 }] });
    expect(redisTopologyFrom(loadConfig({ REDIS_CLUSTER_NODES: 'n1:6379' }))).toMatchObject({ kind: 'cluster', nodes: [{ host: 'n1', port: 6379 }] });
  });

  it('connects through Sentinel with the master name, and the password, db and TLS of REDIS_URL', () => {
    const redis = open(connectRedis(loadConfig({ REDIS_URL: 'rediss://app:s3cret@ignored:6379/2', REDIS_SENTINELS: '127.0.0.1:1', REDIS_SENTINEL_MASTER: 'orders' }), 'switchyard-test'));
    expect(redis).not.toBeInstanceOf(Cluster);
    expect((redis as Exclude<RedisConnection, Cluster>).options).toMatchObject({
      sentinels: [{ host: '127.0.0.1', port: 1 }],
      name: 'orders',
      username: 'app',
      password: 's3cret',
      db: 2,
      tls: {},
      enableTLSForSentinelMode: true,
      maxRetriesPerRequest: null,
      connectionName: 'switchyard-test',
    });
  });

  it('connects to a cluster with ioredis Cluster, BullMQ-ready, request connections failing fast', () => {
    const config = loadConfig({ REDIS_URL: 'redis://:s3cret@ignored:6379', REDIS_CLUSTER_NODES: '127.0.0.1:1,127.0.0.1:2' });
    const redis = open(connectRedis(config, 'switchyard-test'));
    expect(redis).toBeInstanceOf(Cluster);
    expect((redis as Cluster).options.redisOptions).toMatchObject({ password: 's3cret', maxRetriesPerRequest: null, connectionName: 'switchyard-test' });
    const request = open(connectRequestRedis(config, 'switchyard-test-requests', 500));
    expect((request as Cluster).options).toMatchObject({ enableOfflineQueue: false, redisOptions: { commandTimeout: 500, maxRetriesPerRequest: 1 } });
    const subscriber = open(duplicateConnection(redis, 'switchyard-test-sub'));
    expect(subscriber).toBeInstanceOf(Cluster);
    expect(connectionNameOf(subscriber)).toBe('switchyard-test-sub');
    expect((subscriber as Cluster).options.redisOptions?.password).toBe('s3cret');
  });
});
