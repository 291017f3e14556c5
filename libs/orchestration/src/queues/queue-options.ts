import type { DefaultJobOptions } from 'bullmq';

export interface TaskJobPolicy {
  /** Attempts of one task before it fails for good (transient failures only). */
  maxAttempts: number;
}

/**
 * Options of every task's queue job. The queue job id is the task id, so enqueuing the
 * same task twice (a retry of a submission, a rebuild after Redis loss) is a no-op.
 * Finished entries are pruned by age and count: Postgres keeps the history.
 */
export function taskJobOptions(policy: TaskJobPolicy): DefaultJobOptions {
  return {
    attempts: policy.maxAttempts,
    backoff: { type: 'exponential', delay: 1_000, jitter: 0.5 },
    removeOnComplete: { age: 3_600, count: 10_000 },
    removeOnFail: { age: 7 * 86_400, count: 10_000 },
  };
}
