import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';

/** CPU seconds spent so far by this process, the Postgres backends of one database, and Redis. */
export interface CpuSnapshot {
  node: number;
  /** By backend pid; a backend born during the interval counts from zero. */
  postgres: Map<number, number>;
  /** Server-wide: includes other clients of the same Redis, if any. */
  redis: number;
}

export interface CpuSpent {
  node: number;
  postgres: number;
  redis: number;
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** utime + stime of a process from /proc, in seconds; 0 when it is gone or unreadable. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is parenthesised and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

export async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const value = (key: string) => Number(new RegExp(`^${key}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return value('used_cpu_user') + value('used_cpu_sys');
}

/** `postgres`: a pool on the database whose backends to count (all of them, whoever's), or none. */
export async function cpuSnapshot(redis: Redis, postgres?: { pool: Pool; database: string }): Promise<CpuSnapshot> {
  const usage = process.cpuUsage();
  const backends = postgres
    ? (await postgres.pool.query<{ pid: number }>('/* bench */ select pid from pg_stat_activity where datname = $1', [postgres.database])).rows
    : [];
  return {
    node: (usage.user + usage.system) / 1e6,
    postgres: new Map(backends.map((r) => [r.pid, processCpuSeconds(r.pid)])),
    redis: await redisCpuSeconds(redis),
  };
}

export function cpuSpent(before: CpuSnapshot, after: CpuSnapshot): CpuSpent {
  let postgres = 0;
  for (const [pid, seconds] of after.postgres) postgres += seconds - (before.postgres.get(pid) ?? 0);
  return { node: after.node - before.node, postgres, redis: after.redis - before.redis };
}
