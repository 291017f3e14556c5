/**
 * Fair admission of queued jobs (SPEC §6), as a pure decision. The integration runs it
 * inside one transaction that holds an advisory lock, so every supervisor agrees
 * (see README, "Admission").
 */

export interface QueuedJob {
  jobId: string;
  tenantId: string;
}

export interface AdmissionState {
  /** Queued jobs, oldest first (`ORDER BY created_at, id`). */
  queued: readonly QueuedJob[];
  /** Running jobs per tenant; a tenant not listed runs none. */
  running: Readonly<Record<string, number>>;
  /** The tenant's `max_running_jobs`. */
  limitOf: (tenantId: string) => number;
  /** `global.max_running_jobs`. */
  globalLimit: number;
}

/**
 * The jobs to admit now, in admission order. Each free slot goes to the tenant that runs
 * the fewest jobs among those with a queued job and room under their own limit; a tie
 * goes to the tenant whose oldest queued job is oldest. Within a tenant, first in, first
 * out. Admission stops when the global limit is reached or no tenant can take a job.
 *
 * Why least-running first: it needs no state beyond the counts (no round-robin cursor to
 * keep in Postgres), a flooding tenant cannot hold more slots than a quiet one that is
 * waiting, and a waiting tenant is served at the first free slot it is the lowest for.
 */
export function decideAdmission(state: AdmissionState): string[] {
  const queues = new Map<string, Array<{ jobId: string; position: number }>>();
  state.queued.forEach((job, position) => {
    const queue = queues.get(job.tenantId) ?? [];
    queue.push({ jobId: job.jobId, position });
    queues.set(job.tenantId, queue);
  });
  const running = new Map(Object.entries(state.running));
  let free = state.globalLimit - [...running.values()].reduce((sum, n) => sum + n, 0);
  const admitted: string[] = [];
  const heads = new Map([...queues.keys()].map((tenant) => [tenant, 0]));

  while (free > 0) {
    let chosen: { tenant: string; running: number; position: number } | undefined;
    for (const [tenant, queue] of queues) {
      const head = queue[heads.get(tenant)!];
      const count = running.get(tenant) ?? 0;
      if (!head || count >= state.limitOf(tenant)) continue;
      if (!chosen || count < chosen.running || (count === chosen.running && head.position < chosen.position)) {
        chosen = { tenant, running: count, position: head.position };
      }
    }
    if (!chosen) break;
    const index = heads.get(chosen.tenant)!;
    admitted.push(queues.get(chosen.tenant)![index]!.jobId);
    heads.set(chosen.tenant, index + 1);
    running.set(chosen.tenant, chosen.running + 1);
    free -= 1;
  }
  return admitted;
}
