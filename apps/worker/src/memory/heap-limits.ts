import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets a worker's heap grow past what was live at its last full GC (the heap
 * growing factor − 1). V8's own factor is chosen from the collector's speed and reaches 4×
 * on a quiet machine: after start-up (≈ 45 MB live) a worker then made no full GC until its
 * old space passed ≈ 120 MB, and with 100 tasks in flight, whose request objects outlive two
 * scavenges and are promoted, its RSS reached 217 MB of mostly dead objects. At 1.3× a full
 * GC comes every few seconds under that load and takes a few milliseconds (incremental).
 */
export const HEAP_GROWING_PERCENT = 30;

/**
 * The largest young generation (both semi-spaces) a worker lets V8 grow to. V8 doubles it up to
 * 2 × 16 MB when many objects survive a scavenge — 100 tasks in flight always do — and those
 * 32 MB stay resident. With both limits the workers' CPU per task in bench 8 stayed within its
 * run-to-run noise (docs/BENCHMARKS.md, bench 8, Session 5); a 2 MB young generation (no
 * growth at all) cost about 2 ms more per task in the scale bench.
 */
export const MAX_YOUNG_GENERATION_BYTES = 8 * 1024 * 1024;

/** The young generation's growth factor at `youngBytes` committed: it may double only while the doubled size stays within the bound. */
export function youngGrowthFactor(youngBytes: number): 1 | 2 {
  return youngBytes * 2 <= MAX_YOUNG_GENERATION_BYTES ? 2 : 1;
}

/**
 * Bounds the worker's heap growth (see the constants). `--max-semi-space-size` would be read only
 * when the process starts, and the worker does not control its command line; the growth factor
 * of the young generation and the heap growing percent are read by V8 at each GC, so they are
 * set here: the young generation may double only while the doubled size stays within the bound,
 * checked after every GC once the worker has started (it can shrink when idle and grow again).
 */
export function limitHeapGrowth(): { startedUp(): void } {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  // No growth during start-up: module loading and the app's init are long synchronous runs
  // whose scavenges would double the young generation several times before a callback runs.
  let growthFactor = 1;
  setFlagsFromString('--semi-space-growth-factor=1');
  const setGrowth = () => {
    const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
    const factor = youngGrowthFactor(young);
    if (factor === growthFactor) return;
    growthFactor = factor;
    setFlagsFromString(`--semi-space-growth-factor=${factor}`);
  };
  return {
    startedUp: () => {
      setGrowth();
      new PerformanceObserver(setGrowth).observe({ entryTypes: ['gc'] });
    },
  };
}
