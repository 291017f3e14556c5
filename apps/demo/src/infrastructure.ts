import { spawnSync } from 'node:child_process';
import IORedis from 'ioredis';
import { Client } from 'pg';
import { ManagedProcess, freePort } from '@switchyard/devkit';

export class MissingDependencyError extends Error {}

async function redisAnswers(url: string): Promise<boolean> {
  const redis = new IORedis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2_000 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Redis from REDIS_URL; if it does not answer and redis-server is installed, a throwaway
 * one on a free port (no persistence), stopped with the demo.
 */
export async function obtainRedis(url: string, log: (line: string) => void): Promise<{ url: string; stop: () => Promise<void> }> {
  if (await redisAnswers(url)) return { url, stop: async () => undefined };
  if (!onPath('redis-server')) {
    throw new MissingDependencyError(
      `Redis does not answer at ${url}. Start one (e.g. \`apt-get install redis-server\` then \`redis-server --daemonize yes\`), or set REDIS_URL to a reachable Redis.`,
    );
  }
  const port = await freePort();
  log(`Redis does not answer at ${url}; starting a throwaway redis-server on port ${port}`);
  const server = ManagedProcess.spawnCommand('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], 'redis');
  const throwaway = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 50 && !(await redisAnswers(throwaway)); i += 1) await new Promise((r) => setTimeout(r, 100));
  if (!(await redisAnswers(throwaway))) throw new MissingDependencyError(`the throwaway redis-server did not start:\n${server.tail()}`);
  return { url: throwaway, stop: async () => void (await server.stop()) };
}

export async function checkPostgres(url: string): Promise<void> {
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const client = new Client({ connectionString: maintenance.toString(), connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    throw new MissingDependencyError(
      `Postgres does not answer at ${maintenance.host} (${(error as Error).message}). Start PostgreSQL (e.g. \`apt-get install postgresql\`, then \`pg_ctlcluster 15 main start\`), or set DATABASE_URL=postgres://user@host:5432/switchyard to one where the role may create a database.`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
