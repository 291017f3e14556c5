/** One sample line of the Prometheus text format. */
export interface PrometheusSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedPrometheusText {
  /** `# TYPE` of each metric family. */
  types: Map<string, string>;
  samples: PrometheusSample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * Parses the text exposition format (what a scraper reads). Throws on a line that is neither a
 * comment nor a well-formed sample, so a test that parses /metrics also checks its syntax.
 */
export function parsePrometheusText(text: string): ParsedPrometheusText {
  const types = new Map<string, string>();
  const samples: PrometheusSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type) types.set(type[1]!, type[2]!);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? '').matchAll(LABEL)) labels[key!] = raw!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    const value = match[3] === '+Inf' ? Number.POSITIVE_INFINITY : match[3] === '-Inf' ? Number.NEGATIVE_INFINITY : Number(match[3]);
    // Prometheus parses floats as Go does: NaN in any case (prom-client writes `Nan`).
    if (Number.isNaN(value) && !/^nan$/i.test(match[3]!)) throw new Error(`not a Prometheus value: ${line}`);
    samples.push({ name: match[1]!, labels, value });
  }
  return { types, samples };
}

/** The value of the sample with exactly these labels, if any. */
export function sampleValue(parsed: ParsedPrometheusText, name: string, labels: Record<string, string>): number | undefined {
  const keys = Object.keys(labels);
  return parsed.samples.find((s) => s.name === name && Object.keys(s.labels).length === keys.length && keys.every((k) => s.labels[k] === labels[k]))?.value;
}

/** Every sample of `name` whose labels include `labels`. */
export function samplesOf(parsed: ParsedPrometheusText, name: string, labels: Record<string, string> = {}): PrometheusSample[] {
  return parsed.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}
