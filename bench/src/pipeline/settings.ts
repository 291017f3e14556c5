import { EnvSchema } from '@switchyard/config';
import { positiveInt } from '../support/env';

/** What the pipeline bench runs, and what one round reports back. */

export interface PipelineSettings {
  /** doc_review jobs per measured switchyard round; each is 1 + `children` queue jobs. */
  jobs: number;
  /**
   * Jobs of the same shape per measured raw round: more than `jobs`, because raw BullMQ is
   * ~10x faster and a timed interval under ~2 s is mostly noise on a shared machine.
   */
  rawJobs: number;
  /** Documents per job = extract tasks = children of the flow's parent. */
  children: number;
  /** Measured rounds per side, alternating raw / switchyard. */
  rounds: number;
  /**
   * Untimed warm-up in each round's process before the measured jobs (JIT, pools, Redis): batches
   * of `warmupJobs` jobs, repeated until `warmupSeconds` have passed, so both sides warm for as long.
   */
  warmupJobs: number;
  warmupSeconds: number;
  /** BullMQ worker concurrency of each queue's worker, per side. */
  rawConcurrency: number;
  switchyardConcurrency: number;
  /** Submissions in flight at once (the supervisor serves concurrent requests). */
  submitConcurrency: number;
  /** Size of each Postgres pool (the supervisor's and the worker's); the apps' default is 16. */
  poolSize: number;
  /** Options of the raw baseline's queue jobs: BullMQ defaults, or the product's taskJobOptions. */
  rawJobOptions: 'bullmq-default' | 'product';
  roundTimeoutMs: number;
}


/** Defaults chosen by trying them on this machine (docs/BENCHMARKS.md); env vars override, for profiling. */
export function pipelineSettingsFromEnv(): PipelineSettings {
  return {
    jobs: positiveInt('BENCH_JOBS', 600),
    rawJobs: positiveInt('BENCH_RAW_JOBS', 2_000),
    children: positiveInt('BENCH_CHILDREN', 5),
    rounds: positiveInt('BENCH_ROUNDS', 2),
    warmupJobs: positiveInt('BENCH_WARMUP_JOBS', 100),
    warmupSeconds: positiveInt('BENCH_WARMUP_SECONDS', 4),
    rawConcurrency: positiveInt('BENCH_RAW_CONCURRENCY', 50),
    switchyardConcurrency: positiveInt('BENCH_SY_CONCURRENCY', 50),
    submitConcurrency: positiveInt('BENCH_SUBMIT_CONCURRENCY', 16),
    poolSize: positiveInt('BENCH_POOL_SIZE', EnvSchema.parse({}).DATABASE_POOL_SIZE),
    rawJobOptions: process.env.BENCH_RAW_JOB_OPTIONS === 'product' ? 'product' : 'bullmq-default',
    roundTimeoutMs: positiveInt('BENCH_ROUND_TIMEOUT_MS', 90_000),
  };
}

export type Side = 'raw' | 'switchyard';

/** One round, run in a fresh process: a warm-up, then the measured jobs. */
export interface RoundRequest {
  side: Side;
  label: string;
  /** BullMQ key prefix of the whole bench; the round uses `${prefix}:${side}-${label}…`. */
  prefix: string;
  /** The bench's migrated database (switchyard rounds only). */
  dbUrl: string;
  settings: PipelineSettings;
}

export interface RoundResult {
  side: Side;
  label: string;
  jobs: number;
  queueJobs: number;
  seconds: number;
  tasksPerSecond: number;
  /** CPU seconds in the timed interval: the round's process, its Postgres backends, Redis (server-wide). */
  cpu: { node: number; postgres: number; redis: number };
  /** Postgres statements sent in the timed interval, in total and by kind (switchyard only). */
  queries?: number;
  queryKinds?: [string, number][];
}
