import { spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import IORedis from 'ioredis';
import { ManagedProcess, freePort, freePorts, waitFor } from './processes';

/**
 * Private Redis Sentinel, Redis Cluster and PgBouncer servers for the drills: the machine's
 * own binaries, loopback ports, each server in a directory of its own (a redis-server
 * started elsewhere would load a stray dump.rdb from its working directory), all removed
 * by `stop()`. The shared Redis on 6379 and Postgres on 5432 are never changed.
 */

async function ask<T>(port: number, work: (client: IORedis) => Promise<T>): Promise<T | undefined> {
  const client = new IORedis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000, enableOfflineQueue: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await work(client);
  } catch {
    return undefined;
  } finally {
    client.disconnect();
  }
}

function redisServer(port: number, dir: string, extra: string[], name: string): ManagedProcess {
  mkdirSync(dir, { recursive: true });
  return ManagedProcess.spawnCommand(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', ...extra],
    name,
  );
}

/** A port whose +10000 (a cluster node's bus port) is free too. */
async function freeClusterPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10_000 > 65_535) continue;
    const busFree = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port + 10_000, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (busFree) return port;
  }
}

/** A primary, a replica and three sentinels (quorum 2) watching them as `masterName`. */
export class PrivateSentinelSet {
  readonly masterName = 'mymaster';
  private readonly servers = new Map<number, ManagedProcess>();
  private readonly sentinelProcesses: ManagedProcess[] = [];

  private constructor(
    private readonly dir: string,
    readonly redisPorts: [number, number],
    readonly sentinelPorts: number[],
  ) {}

  static async start(): Promise<PrivateSentinelSet> {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-sentinel-'));
    const [primary, replica, ...sentinels] = await freePorts(5);
    const set = new PrivateSentinelSet(dir, [primary!, replica!], sentinels);
    try {
      await set.startAll();
    } catch (error) {
      await set.stop();
      throw error;
    }
    return set;
  }

  /**
   * REDIS_* for processes that reach the primary through the sentinels. REDIS_URL names the
   * first primary itself: a process that ignored the sentinels would stay with it and die with it.
   */
  get env(): Record<string, string> {
    return {
      REDIS_URL: `redis://127.0.0.1:${this.redisPorts[0]}`,
      REDIS_SENTINELS: this.sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
      REDIS_SENTINEL_MASTER: this.masterName,
    };
  }

  private async startAll(): Promise<void> {
    const [primary, replica] = this.redisPorts;
    this.servers.set(primary, redisServer(primary, join(this.dir, String(primary)), [], `redis-primary-${primary}`));
    this.servers.set(replica, redisServer(replica, join(this.dir, String(replica)), ['--replicaof', '127.0.0.1', String(primary)], `redis-replica-${replica}`));
    await waitFor('the replica in sync with the primary', async () => ((await ask(replica, (c) => c.info('replication')))?.includes('master_link_status:up') ? true : undefined), 20_000);
    for (const port of this.sentinelPorts) {
      const sentinelDir = join(this.dir, `sentinel-${port}`);
      mkdirSync(sentinelDir, { recursive: true });
      const conf = join(sentinelDir, 'sentinel.conf');
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${sentinelDir}`,
          `sentinel monitor ${this.masterName} 127.0.0.1 ${primary} 2`,
          `sentinel down-after-milliseconds ${this.masterName} ${SENTINEL_DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${this.masterName} 10000`,
          `sentinel parallel-syncs ${this.masterName} 1`,
          '',
        ].join('\n'),
      );
      this.sentinelProcesses.push(ManagedProcess.spawnCommand('redis-server', [conf, '--sentinel'], `sentinel-${port}`));
    }
    // A failover needs a quorum that knows each other and the replica: wait until every sentinel does.
    for (const port of this.sentinelPorts) {
      await waitFor(
        `sentinel ${port} to know its peers and the replica`,
        async () => {
          const known = await ask(port, async (c) => ({
            peers: ((await c.call('SENTINEL', 'sentinels', this.masterName)) as unknown[]).length,
            replicas: ((await c.call('SENTINEL', 'replicas', this.masterName)) as unknown[]).length,
          }));
          return known && known.peers >= 2 && known.replicas >= 1 ? true : undefined;
        },
        30_000,
        200,
      );
    }
  }

  /** The primary's port as the sentinels see it now. */
  async primaryPort(): Promise<number> {
    for (const port of this.sentinelPorts) {
      const address = await ask(port, (c) => c.call('SENTINEL', 'get-master-addr-by-name', this.masterName) as Promise<[string, string] | null>);
      if (address) return Number(address[1]);
    }
    throw new Error('no sentinel names a primary');
  }

  /** kill -9 of the current primary; returns its port. */
  async killPrimary(): Promise<number> {
    const port = await this.primaryPort();
    const server = this.servers.get(port)!;
    server.kill('SIGKILL');
    await server.waitForExit();
    return port;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.sentinelProcesses, ...this.servers.values()].map((p) => p.stop()));
    rmSync(this.dir, { recursive: true, force: true });
  }

  logs(): string {
    return [...this.servers.values(), ...this.sentinelProcesses].map((p) => `--- ${p.name}\n${p.tail(15)}`).join('\n');
  }
}

/** Three masters (no replicas) in one Redis Cluster. */
export class PrivateRedisCluster {
  private readonly servers = new Map<number, ManagedProcess>();

  private constructor(
    private readonly dir: string,
    readonly ports: number[],
  ) {}

  static async start(masters = 3): Promise<PrivateRedisCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-cluster-'));
    const ports: number[] = [];
    while (ports.length < masters) {
      const port = await freeClusterPort();
      if (!ports.includes(port)) ports.push(port);
    }
    const cluster = new PrivateRedisCluster(dir, ports);
    try {
      for (const port of ports) cluster.startNode(port);
      for (const port of ports) await waitFor(`cluster node ${port}`, async () => ((await ask(port, (c) => c.ping())) === 'PONG' ? true : undefined), 10_000, 50);
      const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], { encoding: 'utf8' });
      if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
      await cluster.waitUntilHealthy();
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  get env(): Record<string, string> {
    return { REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: this.ports.map((p) => `127.0.0.1:${p}`).join(',') };
  }

  private startNode(port: number): void {
    const nodeDir = join(this.dir, String(port));
    this.servers.set(
      port,
      redisServer(port, nodeDir, ['--cluster-enabled', 'yes', '--cluster-config-file', join(nodeDir, 'nodes.conf'), '--cluster-node-timeout', '2000'], `cluster-${port}`),
    );
  }

  /** Every node says cluster_state:ok. */
  async waitUntilHealthy(timeoutMs = 30_000): Promise<void> {
    for (const port of this.ports) {
      await waitFor(`cluster node ${port} to report cluster_state:ok`, async () => ((await ask(port, (c) => c.call('CLUSTER', 'INFO') as Promise<string>))?.includes('cluster_state:ok') ? true : undefined), timeoutMs, 100);
    }
  }

  /** kill -9 of one master and a start from nothing (it keeps its node id and slots from nodes.conf, and no data). */
  async restartEmpty(port: number): Promise<void> {
    const server = this.servers.get(port)!;
    server.kill('SIGKILL');
    await server.waitForExit();
    this.startNode(port);
    await this.waitUntilHealthy();
  }

  /** The master serving `key`'s slot now. */
  async portOfKey(key: string): Promise<number> {
    const slot = (await ask(this.ports[0]!, (c) => c.call('CLUSTER', 'KEYSLOT', key) as Promise<number>))!;
    const ranges = (await ask(this.ports[0]!, (c) => c.call('CLUSTER', 'SLOTS') as Promise<[number, number, [string, number]][]>))!;
    const owner = ranges.find(([from, to]) => slot >= from && slot <= to);
    if (!owner) throw new Error(`no node serves slot ${slot}`);
    return Number(owner[2][1]);
  }

  /** Keys held by each master (to see the load spread). */
  async keysPerNode(): Promise<number[]> {
    return Promise.all(this.ports.map(async (port) => (await ask(port, (c) => c.dbsize())) ?? 0));
  }

  async stop(): Promise<void> {
    await Promise.all([...this.servers.values()].map((p) => p.stop()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const PGBOUNCER = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';
/** DRILL_DOWN_AFTER_MS: a slower failover for a drill run by hand (a 22 s one still passed, session 7). */
const SENTINEL_DOWN_AFTER_MS = drillDownAfterMs(process.env.DRILL_DOWN_AFTER_MS);

function drillDownAfterMs(value: string | undefined): string {
  if (value === undefined || value === '') return '1000';
  if (!/^[1-9]\d*$/.test(value)) throw new Error(`DRILL_DOWN_AFTER_MS must be a positive integer (milliseconds), got "${value}"`);
  return value;
}

function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  return {
    uid: Number(spawnSync('id', ['-u', 'postgres']).stdout.toString().trim()),
    gid: Number(spawnSync('id', ['-g', 'postgres']).stdout.toString().trim()),
  };
}

/**
 * PgBouncer in transaction mode in front of a Postgres (every database name passed through).
 * Debian's pgbouncer refuses to run as root: as root it runs as the `postgres` user.
 */
export class PrivatePgBouncer {
  private constructor(
    private readonly dir: string,
    readonly port: number,
    private readonly server: ManagedProcess,
  ) {}

  static async start(upstream = { host: '127.0.0.1', port: 5432 }, poolSize = 20): Promise<PrivatePgBouncer> {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-pgbouncer-'));
    const port = await freePort();
    const ini = join(dir, 'pgbouncer.ini');
    writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n');
    writeFileSync(
      ini,
      [
        '[databases]',
        `* = host=${upstream.host} port=${upstream.port}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        `unix_socket_dir = ${dir}`,
        'auth_type = trust',
        `auth_file = ${join(dir, 'userlist.txt')}`,
        'pool_mode = transaction',
        `default_pool_size = ${poolSize}`,
        'max_client_conn = 1000',
        'server_reset_query =',
        'ignore_startup_parameters = extra_float_digits',
        '',
      ].join('\n'),
    );
    const user = postgresUser();
    if (user) {
      chownSync(dir, user.uid, user.gid);
      for (const file of ['pgbouncer.ini', 'userlist.txt']) chownSync(join(dir, file), user.uid, user.gid);
    }
    const child = spawn(PGBOUNCER, [ini], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], ...(user ?? {}) });
    const server = new ManagedProcess(`pgbouncer-${port}`, child);
    const bouncer = new PrivatePgBouncer(dir, port, server);
    try {
      await server.waitForLine(/listening on 127\.0\.0\.1:\d+/, 15_000);
    } catch (error) {
      await bouncer.stop();
      throw error;
    }
    return bouncer;
  }

  /** The same database URL, through this pooler. */
  pooled(directUrl: string): string {
    const url = new URL(directUrl);
    url.host = `127.0.0.1:${this.port}`;
    return url.toString();
  }

  async stop(): Promise<void> {
    await this.server.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  logs(): string {
    return this.server.tail(20);
  }
}
