import { describeProxy, listenDatabaseUrl, upstreamProxyFrom } from './env.schema';
import { ConfigError, loadConfig } from './load-config';

describe('loadConfig', () => {
  it('applies the defaults to an empty environment', () => {
    const config = loadConfig({});
    expect(config.DATABASE_URL).toBe('postgres://postgres@127.0.0.1:5432/switchyard');
    expect(config.REDIS_URL).toBe('redis://127.0.0.1:6379');
    expect(config.PORT).toBe(3000);
    expect(config.WORKER_PORT).toBe(0);
    expect(config.WORKER_QUEUES).toBe('all');
    expect(config.ROUTER_CONFIG).toBe('config/router.yaml');
    expect(config.API_KEYS.size).toBe(0);
    expect(config.ADMIN_TOKEN).toBeUndefined();
    expect([config.HEARTBEAT_MS, config.STALE_AFTER_MS, config.SWEEP_INTERVAL_MS]).toEqual([2000, 8000, 1000]);
  });

  it('parses API keys into a key → tenant map', () => {
    const config = loadConfig({ API_KEYS: 'acme:key-acme-123, globex:key-globex-456' });
    expect(config.API_KEYS.get('key-acme-123')).toBe('acme');
    expect(config.API_KEYS.get('key-globex-456')).toBe('globex');
  });

  it('reads the egress proxy from the usual variables, lower case first, and none when unset', () => {
    expect(upstreamProxyFrom(loadConfig({}))).toBeUndefined();
    expect(upstreamProxyFrom(loadConfig({ NO_PROXY: 'localhost' }))).toBeUndefined();
    expect(
      upstreamProxyFrom(loadConfig({ HTTPS_PROXY: 'http://proxy.corp:3128', https_proxy: 'http://egress.corp:3128', NO_PROXY: '127.0.0.1,.internal' })),
    ).toEqual({ httpsProxy: 'http://egress.corp:3128', noProxy: '127.0.0.1,.internal' });
    expect(upstreamProxyFrom(loadConfig({ HTTP_PROXY: 'http://proxy.corp:3128', no_proxy: 'vllm' }))).toEqual({ httpProxy: 'http://proxy.corp:3128', noProxy: 'vllm' });
  });

  it('rejects a proxy URL that is not http(s) without repeating it, and logs proxies without credentials', () => {
    const error = (() => {
      try {
        loadConfig({ HTTPS_PROXY: 'socks5://user:hunter2@proxy.corp:1080' });
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error.problems).toEqual([{ variable: 'HTTPS_PROXY', message: 'must be an http:// or https:// proxy URL' }]);
    expect(error.message).not.toContain('hunter2');
    expect(describeProxy('http://user:hunter2@proxy.corp:3128')).toBe('http://proxy.corp:3128');
  });

  it('parses WORKER_QUEUES as a list', () => {
    expect(loadConfig({ WORKER_QUEUES: 'extract, synthesize' }).WORKER_QUEUES).toEqual(['extract', 'synthesize']);
  });

  it.each([
    ['PORT', { PORT: 'eighty' }],
    ['PORT', { PORT: '70000' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x' }],
    ['REDIS_URL', { REDIS_URL: 'localhost:6379' }],
    ['API_KEYS', { API_KEYS: 'no-separator' }],
    ['API_KEYS', { API_KEYS: 'acme:short' }],
    ['API_KEYS', { API_KEYS: 'a:same-key-123,b:same-key-123' }],
    ['ADMIN_TOKEN', { ADMIN_TOKEN: 'tiny' }],
    ['HEARTBEAT_MS', { HEARTBEAT_MS: '-5' }],
    ['STALE_AFTER_MS', { HEARTBEAT_MS: '5000', STALE_AFTER_MS: '6000' }],
  ])('names %s when its value is bad', (variable, env) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    try {
      loadConfig(env);
    } catch (error) {
      expect((error as ConfigError).problems.map((p) => p.variable)).toContain(variable);
      expect((error as Error).message).toContain(variable);
    }
  });

  it('parses the Sentinel and Cluster node lists and the pool mode, with their defaults', () => {
    const defaults = loadConfig({});
    expect([defaults.REDIS_SENTINELS, defaults.REDIS_CLUSTER_NODES, defaults.REDIS_SENTINEL_MASTER]).toEqual([undefined, undefined, 'mymaster']);
    expect([defaults.DATABASE_POOL_MODE, defaults.MIGRATE_DATABASE_URL]).toEqual(['session', undefined]);
    const sentinel = loadConfig({ REDIS_SENTINELS: 'sentinel-a:26379, 10.0.0.7:26380,[::1]:26381', REDIS_SENTINEL_MASTER: 'orders' });
    expect(sentinel.REDIS_SENTINELS).toEqual([
      { host: 'sentinel-a', port: 26379 },
      { host: '10.0.0.7', port: 26380 },
      { host: '::1', port: 26381 },
    ]);
    expect(sentinel.REDIS_SENTINEL_MASTER).toBe('orders');
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'redis-0:6379' }).REDIS_CLUSTER_NODES).toEqual([{ host: 'redis-0', port: 6379 }]);
    const pooled = loadConfig({ DATABASE_POOL_MODE: 'transaction', MIGRATE_DATABASE_URL: 'postgres://postgres@db:5432/switchyard' });
    expect([pooled.DATABASE_POOL_MODE, pooled.MIGRATE_DATABASE_URL]).toEqual(['transaction', 'postgres://postgres@db:5432/switchyard']);
  });

  it.each([
    ['REDIS_SENTINELS', { REDIS_SENTINELS: 'redis://:hunter2@sentinel-a:26379' }],
    ['REDIS_SENTINELS', { REDIS_SENTINELS: 'sentinel-a:26379,:hunter2@b:1' }],
    ['REDIS_SENTINELS', { REDIS_SENTINELS: 'sentinel-a' }],
    ['REDIS_CLUSTER_NODES', { REDIS_CLUSTER_NODES: 'redis-0:99999' }],
    ['REDIS_CLUSTER_NODES', { REDIS_CLUSTER_NODES: 'redis-0:6379', REDIS_SENTINELS: 'sentinel-a:26379' }],
    ['REDIS_URL', { REDIS_CLUSTER_NODES: 'redis-0:6379', REDIS_URL: 'redis://:hunter2@redis-0:6379/3' }],
    ['REDIS_SENTINEL_MASTER', { REDIS_SENTINEL_MASTER: 'my master' }],
    ['DATABASE_POOL_MODE', { DATABASE_POOL_MODE: 'statement' }],
    ['MIGRATE_DATABASE_URL', { MIGRATE_DATABASE_URL: 'mysql://root:hunter2@db/x' }],
  ])('names %s when its value is bad, never repeating a password', (variable, env) => {
    let caught: unknown;
    try {
      loadConfig(env);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).problems.map((p) => p.variable)).toEqual([variable]);
    expect((caught as Error).message).not.toContain('hunter2');
  });

  it('sends a LISTEN connection to a session, never through a transaction pooler', () => {
    const direct = 'postgres://postgres@db:5432/switchyard';
    const pooled = 'postgres://postgres@pgbouncer:6432/switchyard';
    expect(listenDatabaseUrl(loadConfig({ DATABASE_URL: direct }))).toBe(direct);
    expect(listenDatabaseUrl(loadConfig({ DATABASE_URL: pooled, DATABASE_POOL_MODE: 'transaction', MIGRATE_DATABASE_URL: direct }))).toBe(direct);
    expect(listenDatabaseUrl(loadConfig({ DATABASE_URL: pooled, DATABASE_POOL_MODE: 'transaction' }))).toBeUndefined();
  });

  it('treats blank values as unset', () => {
    expect(loadConfig({ PORT: '' }).PORT).toBe(3000);
  });
});
