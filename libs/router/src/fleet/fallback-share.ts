/**
 * A process's share of a fleet-wide limit while Redis cannot be asked: the limit split evenly
 * over the processes last seen alive, rounded down, at least 1 (a process that may send
 * nothing would turn a Redis outage into an outage of the target). With N processes the fleet
 * then stays within the limit, or sends at most one call per process when N exceeds it.
 */
export function fallbackShare(limit: number | undefined, liveProcesses: number): number | undefined {
  if (limit === undefined) return undefined;
  return Math.max(1, Math.floor(limit / Math.max(1, Math.floor(liveProcesses))));
}
