import { positiveInt } from '../support/env';

/** Settings of the end-to-end pipeline benches; env vars override the defaults (docs/BENCHMARKS.md). */

export interface E2eSettings {
  /** doc_review jobs per measured Switchyard round; each is 1 synthesize + `documents` extract tasks. */
  jobs: number;
  /** Flows of the same shape per measured raw BullMQ round (raw is much faster: a longer count keeps its interval measurable). */
  rawJobs: number;
  /** Flows per measured floor round (model calls through the SDK, no platform). */
  floorJobs: number;
  /**
   * Untimed jobs per side before the first measured round. Enough for V8 to have compiled the
   * per-task code: after 40 jobs, TurboFan still took 14–20 % of a worker's CPU in the first
   * measured round (perf, session 9), and every side's CPU per task read 17–25 % high.
   */
  warmupJobs: number;
  documents: number;
  /** Jobs in flight: each lane submits one job and waits for its end before the next. */
  inFlight: number;
  rounds: number;
  workers: number;
  /** BullMQ concurrency per queue of the raw baseline's no-op workers (their best on this machine, bench 1). */
  rawConcurrency: number;
  /** WORKER_CONCURRENCY of the Switchyard workers, and the floor workers' concurrency per queue. */
  workerConcurrency: number;
  jobTimeoutMs: number;
}

export function e2eSettingsFromEnv(): E2eSettings {
  return {
    jobs: positiveInt('BENCH_E2E_JOBS', 150),
    rawJobs: positiveInt('BENCH_E2E_RAW_JOBS', 1_500),
    floorJobs: positiveInt('BENCH_E2E_FLOOR_JOBS', 400),
    warmupJobs: positiveInt('BENCH_E2E_WARMUP_JOBS', 300),
    documents: positiveInt('BENCH_E2E_DOCUMENTS', 10),
    inFlight: positiveInt('BENCH_E2E_IN_FLIGHT', 16),
    rounds: positiveInt('BENCH_E2E_ROUNDS', 2),
    workers: positiveInt('BENCH_E2E_WORKERS', 2),
    rawConcurrency: positiveInt('BENCH_E2E_RAW_CONCURRENCY', 50),
    workerConcurrency: positiveInt('BENCH_E2E_WORKER_CONCURRENCY', 8),
    jobTimeoutMs: positiveInt('BENCH_E2E_JOB_TIMEOUT_MS', 120_000),
  };
}
