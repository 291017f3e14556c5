/**
 * A small in-process metrics registry rendered in the Prometheus text exposition format
 * (version 0.0.4): counters and gauges with labels, and metrics read at scrape time.
 * Enough for /metrics without a client library; names and labels are checked once, at
 * registration, and label values are escaped on output.
 */

export type Labels = Readonly<Record<string, string | number>>;

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

interface Metric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge';
  samples(): Iterable<[labels: Labels, value: number]>;
}

abstract class LabelledMetric implements Metric {
  abstract readonly type: 'counter' | 'gauge';
  private readonly values = new Map<string, { labels: Labels; value: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
  ) {}

  protected add(labels: Labels, delta: number, replace: boolean): void {
    const key = this.keyOf(labels);
    const entry = this.values.get(key);
    if (entry) entry.value = replace ? delta : entry.value + delta;
    else this.values.set(key, { labels: { ...labels }, value: delta });
  }

  /** The current value for these labels; 0 if never set. */
  get(labels: Labels = {}): number {
    return this.values.get(this.keyOf(labels))?.value ?? 0;
  }

  *samples(): Iterable<[Labels, number]> {
    for (const { labels, value } of this.values.values()) yield [labels, value];
  }

  private keyOf(labels: Labels): string {
    const given = Object.keys(labels);
    if (given.length !== this.labelNames.length || this.labelNames.some((n) => !(n in labels))) {
      throw new Error(`metric ${this.name} takes labels [${this.labelNames.join(', ')}], got [${given.join(', ')}]`);
    }
    return this.labelNames.map((n) => String(labels[n])).join('\u0000');
  }
}

export class Counter extends LabelledMetric {
  readonly type = 'counter';

  inc(labels: Labels = {}, by = 1): void {
    if (!(by >= 0)) throw new Error(`counter ${this.name} can only go up (got ${by})`);
    this.add(labels, by, false);
  }
}

export class Gauge extends LabelledMetric {
  readonly type = 'gauge';

  set(labels: Labels, value: number): void {
    this.add(labels, value, true);
  }
}

/** A metric whose samples are read when scraped (process memory, cached job counts, another component's counts). */
class CollectedMetric implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge',
    private readonly collect: () => Iterable<[Labels, number]>,
  ) {}

  samples(): Iterable<[Labels, number]> {
    return this.collect();
  }
}

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.register(new Counter(name, help, this.checkLabels(name, labelNames)));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.register(new Gauge(name, help, this.checkLabels(name, labelNames)));
  }

  /** A metric read at scrape time; `collect` must be cheap and synchronous. A counter's values must only go up. */
  collected(name: string, help: string, type: 'counter' | 'gauge', collect: () => Iterable<[Labels, number]>): void {
    this.register(new CollectedMetric(name, help, type, collect));
  }

  /** Every metric in the text exposition format, ending with a newline. */
  render(): string {
    const lines: string[] = [];
    for (const metric of this.metrics.values()) {
      lines.push(`# HELP ${metric.name} ${escapeHelp(metric.help)}`, `# TYPE ${metric.name} ${metric.type}`);
      for (const [labels, value] of metric.samples()) lines.push(`${metric.name}${renderLabels(labels)} ${renderValue(value)}`);
    }
    return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  }

  private register<M extends Metric>(metric: M): M {
    if (!METRIC_NAME.test(metric.name)) throw new Error(`invalid metric name "${metric.name}"`);
    if (this.metrics.has(metric.name)) throw new Error(`metric ${metric.name} is already registered`);
    this.metrics.set(metric.name, metric);
    return metric;
  }

  private checkLabels(name: string, labelNames: readonly string[]): readonly string[] {
    for (const label of labelNames) {
      if (!LABEL_NAME.test(label) || label.startsWith('__')) throw new Error(`metric ${name}: invalid label name "${label}"`);
    }
    return [...labelNames];
  }
}

function renderLabels(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  return `{${entries.map(([k, v]) => `${k}="${escapeLabelValue(String(v))}"`).join(',')}}`;
}

/** Label values escape backslash, double quote and line feed. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** HELP text escapes backslash and line feed. */
function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function renderValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}
