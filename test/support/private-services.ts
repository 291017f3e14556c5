import { spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import IORedis from 'ioredis';
import { Client } from 'pg';
import { ManagedProcess, freePort, waitFor } from './processes';

/**
 * A redis-server of one test's own, without persistence, that the test may kill and start
 * again empty. The shared Redis on 6379 is never touched.
 */
export class PrivateRedis {
  private server: ManagedProcess | undefined;
  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.startServer();
    return redis;
  }

  async startServer(): Promise<void> {
    this.server = ManagedProcess.spawnCommand(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      `redis-${this.port}`,
    );
    await waitFor(`redis on ${this.port}`, async () => ((await this.ping()) ? true : undefined), 10_000, 50);
  }

  /** SIGKILL: everything in it is gone. */
  async kill(): Promise<void> {
    this.server?.kill('SIGKILL');
    await this.server?.waitForExit();
  }

  async restartEmpty(): Promise<void> {
    await this.kill();
    await this.startServer();
  }

  async stop(): Promise<void> {
    await this.server?.stop();
  }

  private async ping(): Promise<boolean> {
    const client = new IORedis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  }
}

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/**
 * A Postgres cluster of one test's own (initdb in a temp dir, trust auth, its own port and
 * socket dir), that the test may stop and start. The shared cluster on 5432 is never touched.
 * Runs the server as the `postgres` OS user when the test runs as root.
 */
export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  get baseUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-pg-'));
    const pg = new PrivatePostgres(dir, await freePort());
    pg.chownToPostgres();
    pg.run(`${PG_BIN}/initdb -D ${dir}/data -A trust -U postgres --no-sync -E UTF8`);
    await pg.startServer();
    return pg;
  }

  async startServer(): Promise<void> {
    this.run(`${PG_BIN}/pg_ctl -D ${this.dir}/data -l ${this.dir}/server.log -w -t 30 -o "-p ${this.port} -k ${this.dir} -c fsync=off -c max_connections=200" start`);
    await waitFor(`postgres on ${this.port}`, async () => ((await this.answers()) ? true : undefined), 20_000, 100);
  }

  /** Fast shutdown: every connection is dropped, as in a real restart. */
  stopServer(): void {
    this.run(`${PG_BIN}/pg_ctl -D ${this.dir}/data -m fast -w stop`);
  }

  async restart(): Promise<void> {
    this.stopServer();
    await this.startServer();
  }

  async destroy(): Promise<void> {
    try {
      this.run(`${PG_BIN}/pg_ctl -D ${this.dir}/data -m immediate -w stop`);
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private chownToPostgres(): void {
    if (process.getuid?.() !== 0) return;
    const uid = Number(spawnSync('id', ['-u', 'postgres']).stdout.toString().trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres']).stdout.toString().trim());
    chownSync(this.dir, uid, gid);
  }

  private run(command: string): void {
    const asRoot = process.getuid?.() === 0;
    const result = asRoot ? spawnSync('su', ['postgres', '-c', command], { encoding: 'utf8' }) : spawnSync('sh', ['-c', command], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${command} failed (${result.status}): ${result.stderr || result.stdout}`);
  }

  private async answers(): Promise<boolean> {
    const client = new Client({ connectionString: this.baseUrl, connectionTimeoutMillis: 1_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
