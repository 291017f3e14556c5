import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { processCpuSeconds, redisCpuSeconds } from '../support/cpu';

/**
 * CPU of every process of an end-to-end round, read from the processes' own counters:
 * /proc/<pid>/stat (utime + stime) for the Node processes and for each Postgres backend of
 * the bench database (grouped by its `application_name`), and Redis `INFO cpu` (server-wide).
 */

/** Resident set size of a process in MB (VmRSS), or undefined when it is gone. */
export function residentMegabytes(pid: number): number | undefined {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

interface Backend {
  pid: number;
  group: string;
  seconds: number;
}

export interface CpuCounters {
  /** By process name (supervisor, worker-1, llm-sim, bench client, …). */
  processes: Map<string, number>;
  backends: Backend[];
  redis: number;
}

/** What a round watches: its Node processes by name, and the database whose backends count. */
export interface CpuWatch {
  pids: ReadonlyMap<string, number>;
  /** A pool on the bench database (for pg_stat_activity); the bench's own backends are left out. */
  pool: Pool;
  database: string;
  /** Backends whose application_name starts with this are the platform's (the rest is the bench's own). */
  applicationPrefix: string;
  redis: Redis;
}

export async function readCpuCounters(watch: CpuWatch): Promise<CpuCounters> {
  const { rows } = await watch.pool.query<{ pid: number; application_name: string }>(
    'select pid, application_name from pg_stat_activity where datname = $1 and starts_with(application_name, $2)',
    [watch.database, watch.applicationPrefix],
  );
  const processes = new Map<string, number>();
  for (const [name, pid] of watch.pids) processes.set(name, processCpuSeconds(pid));
  const backends = rows.map((r) => ({ pid: r.pid, group: `postgres (${r.application_name.slice(watch.applicationPrefix.length)})`, seconds: processCpuSeconds(r.pid) }));
  return { processes, backends, redis: await redisCpuSeconds(watch.redis) };
}

/**
 * CPU seconds spent between two readings, by part: each process, the Postgres backends by
 * group, and Redis. A backend born in between counts from zero; one that ended in between
 * is lost (the apps' pools keep their connections while busy, so a round loses little).
 */
export function cpuBetween(before: CpuCounters, after: CpuCounters): Map<string, number> {
  const spent = new Map<string, number>();
  const add = (key: string, seconds: number) => spent.set(key, (spent.get(key) ?? 0) + seconds);
  for (const [name, seconds] of after.processes) add(name, seconds - (before.processes.get(name) ?? seconds));
  const earlier = new Map(before.backends.map((b) => [b.pid, b.seconds]));
  for (const backend of after.backends) add(backend.group, backend.seconds - (earlier.get(backend.pid) ?? 0));
  add('redis (server-wide)', after.redis - before.redis);
  return spent;
}
