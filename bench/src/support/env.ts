/** A bench setting from the environment: a positive integer, or the default when unset or empty. */
export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

/**
 * BENCH_PERF_MAP=1: node arguments that make a process write /tmp/perf-<pid>.map, so
 * `perf record -g -p <pid>` names its JS frames (perf samples CPU time; --cpu-prof, wall time).
 */
export function perfMapNodeArgs(): string[] {
  return process.env.BENCH_PERF_MAP ? ['--perf-basic-prof'] : [];
}

/** Under BENCH_PERF_MAP, prints a process's pid for `perf record -p`. */
export function printPerfMapPid(label: string, pid: number | undefined): void {
  if (process.env.BENCH_PERF_MAP) console.log(`BENCH_PERF_MAP: ${label} pid ${pid}`);
}
