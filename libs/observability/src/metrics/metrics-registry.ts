import * as prom from 'prom-client';

/**
 * The process's metrics on `prom-client`: counters, gauges and histograms with labels, and
 * metrics read at scrape time, rendered in the Prometheus text format (0.0.4). One registry
 * per instance (not prom-client's global one), so tests and several apps in one process
 * never share samples.
 */

export type Labels = Readonly<Record<string, string | number>>;
type Sample = readonly [labels: Labels, value: number];

export const PROMETHEUS_CONTENT_TYPE = prom.Registry.PROMETHEUS_CONTENT_TYPE;

/** Seconds, from 5 ms to 2 min: HTTP requests, queue waits, steps and upstream calls alike. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Seconds, from 1 s to 30 min: whole tasks. */
export const TASK_BUCKETS_SECONDS: readonly number[] = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

export class Counter {
  constructor(private readonly metric: prom.Counter) {}

  inc(labels: Labels = {}, by = 1): void {
    if (!(by >= 0)) throw new Error(`counter ${this.name} can only go up (got ${by})`);
    this.metric.inc(labels, by);
  }

  private get name(): string {
    return (this.metric as unknown as { name: string }).name;
  }
}

export class Gauge {
  constructor(private readonly metric: prom.Gauge) {}

  set(labels: Labels, value: number): void {
    this.metric.set(labels, value);
  }
}

export class Histogram {
  constructor(private readonly metric: prom.Histogram) {}

  observe(labels: Labels, value: number): void {
    if (Number.isFinite(value) && value >= 0) this.metric.observe(labels, value);
  }
}

export class MetricsRegistry {
  readonly registry = new prom.Registry();

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return new Counter(new prom.Counter({ name, help, labelNames, registers: [this.registry] }));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return new Gauge(new prom.Gauge({ name, help, labelNames, registers: [this.registry] }));
  }

  histogram(name: string, help: string, labelNames: readonly string[], buckets: readonly number[] = LATENCY_BUCKETS_SECONDS): Histogram {
    return new Histogram(new prom.Histogram({ name, help, labelNames, buckets: [...buckets], registers: [this.registry] }));
  }

  /**
   * A metric read when scraped (another component's counts, BullMQ's queue counts, the router's
   * target states), with the label names its samples use. `collect` may be async; its samples replace the previous ones. A counter's
   * values must only go up.
   */
  collected(name: string, help: string, type: 'counter' | 'gauge', collect: () => Iterable<Sample> | Promise<Iterable<Sample>>, labelNames: readonly string[] = []): void {
    const fill = async (metric: prom.Gauge | prom.Counter) => {
      const samples = [...(await collect())];
      metric.reset();
      for (const [labels, value] of samples) {
        if (metric instanceof prom.Gauge) metric.set(labels, value);
        else metric.inc(labels, Math.max(0, value));
      }
    };
    const declared = [...labelNames];
    if (type === 'gauge') {
      new prom.Gauge({ name, help, labelNames: declared, registers: [this.registry], collect: async function (this: prom.Gauge) { await fill(this); } });
    } else {
      new prom.Counter({ name, help, labelNames: declared, registers: [this.registry], collect: async function (this: prom.Counter) { await fill(this); } });
    }
  }

  /** The Node default process metrics (CPU, memory, event loop lag, GC, handles), `process_`/`nodejs_` names. */
  collectDefaultMetrics(): void {
    prom.collectDefaultMetrics({ register: this.registry });
  }

  /** Every metric in the text exposition format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
