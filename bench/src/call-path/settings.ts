import { positiveInt } from '../support/env';
/** What the call-path bench runs, and what one round reports back. */

/**
 * The ways a round makes its calls, each a layer over the one before:
 * - `sdk`: the bare `openai` SDK (one reused client), streamed as the router streams: the floor;
 * - `router`: the worker's Router (built by `routerProvider`: fleet limiter and retry budget in
 *   Redis, the tenant budget filter, the ledger and metrics observers), `chat` alone;
 * - `worker`: what a task step does per call: `runCallStep` through the traced, paid-once
 *   router (IdempotentModelRouter with the attempt ledger and the result store in Postgres,
 *   group-committed), as the worker app wires it;
 * - `worker-per-call` (for comparison, BENCH_CALL_VARIANTS): the same with one statement per
 *   call for each write and every input tokenized exactly, as before those two changes.
 */
export const CALL_PATH_VARIANTS = ['sdk', 'router', 'worker', 'worker-per-call'] as const;
export type CallPathVariant = (typeof CALL_PATH_VARIANTS)[number];
const DEFAULT_VARIANTS: readonly CallPathVariant[] = ['sdk', 'router', 'worker'];

export interface CallPathSettings {
  /** Timed calls per round. */
  calls: number;
  /** Calls in flight at once (a worker runs many tasks at once). */
  concurrency: number;
  /** Untimed calls first, in the round's process (JIT, pools, connections). */
  warmupCalls: number;
  /** Characters of each document the extract prompt quotes (the shipped template keeps at most 24,000). */
  documentChars: number;
  rounds: number;
  /** The variants each round runs, in this order. */
  variants: readonly CallPathVariant[];
}


export function callPathSettingsFromEnv(): CallPathSettings {
  return {
    calls: positiveInt('BENCH_CALLS', 2_000),
    concurrency: positiveInt('BENCH_CALL_CONCURRENCY', 16),
    warmupCalls: positiveInt('BENCH_WARMUP_CALLS', 500),
    documentChars: positiveInt('BENCH_DOCUMENT_CHARS', 6_000),
    rounds: positiveInt('BENCH_ROUNDS', 3),
    variants: variantsFromEnv(process.env.BENCH_CALL_VARIANTS),
  };
}

/** BENCH_CALL_VARIANTS=sdk,worker,worker-per-call: which variants run (default sdk, router, worker). */
function variantsFromEnv(raw: string | undefined): readonly CallPathVariant[] {
  if (raw === undefined || raw === '') return DEFAULT_VARIANTS;
  const names = raw.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(CALL_PATH_VARIANTS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`BENCH_CALL_VARIANTS: unknown variant ${unknown.join(', ')}; known: ${CALL_PATH_VARIANTS.join(', ')}`);
  return names as CallPathVariant[];
}

export interface CallRoundRequest {
  variant: CallPathVariant;
  label: string;
  settings: CallPathSettings;
  /** The migrated bench database, the Redis key prefix (QUEUE_PREFIX) and the router config pointed at the sim. */
  dbUrl: string;
  prefix: string;
  routerConfig: string;
  /** Profile the timed calls into this .cpuprofile file. */
  profileFile?: string;
}

export interface CallRoundResult {
  variant: CallPathVariant;
  label: string;
  calls: number;
  seconds: number;
  /** CPU seconds in the timed interval: the round's process, the bench database's Postgres backends, Redis (server-wide). */
  cpu: { node: number; postgres: number; redis: number };
  /** Postgres statements the round process sent in the timed interval. */
  queries: number;
}
