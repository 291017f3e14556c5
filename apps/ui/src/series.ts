/** Pure shaping of the admin API's answers for the dashboard: no DOM, unit-tested. */

export interface CostPoint {
  bucket: string;
  key: string;
  target_type: string | null;
  calls: number;
  errors: number;
  cost_usd: number;
}

/** Columns for a line chart: the bucket times (seconds) and one row of values per key. */
export interface ChartColumns {
  times: number[];
  series: Array<{ label: string; values: Array<number | null> }>;
}

/** Every bucket of [since, until) so that quiet minutes show as zero instead of a joined line. */
export function bucketTimes(since: Date, until: Date, bucketSeconds: number): number[] {
  const step = bucketSeconds * 1000;
  const first = Math.floor(since.getTime() / step) * step;
  const times: number[] = [];
  for (let t = first; t < until.getTime(); t += step) times.push(t / 1000);
  return times;
}

/** One line per key (target or tenant) of the chosen measure over every bucket. */
export function seriesByKey(points: readonly CostPoint[], times: readonly number[], measure: 'cost_usd' | 'calls'): ChartColumns {
  const index = new Map(times.map((t, i) => [t, i]));
  const byKey = new Map<string, number[]>();
  for (const point of points) {
    const i = index.get(Date.parse(point.bucket) / 1000);
    if (i === undefined) continue;
    const values = byKey.get(point.key) ?? new Array<number>(times.length).fill(0);
    values[i] = (values[i] ?? 0) + point[measure];
    byKey.set(point.key, values);
  }
  return {
    times: [...times],
    series: [...byKey.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([label, values]) => ({ label, values })),
  };
}

/**
 * The share of calls served by local and by cloud targets per bucket, in percent (the early
 * warning signal: a falling local share means the local fleet is shedding work). A bucket
 * without calls has no share (null), not 0 %.
 */
export function localCloudShare(points: readonly CostPoint[], times: readonly number[]): ChartColumns {
  const index = new Map(times.map((t, i) => [t, i]));
  const local = new Array<number>(times.length).fill(0);
  const cloud = new Array<number>(times.length).fill(0);
  for (const point of points) {
    const i = index.get(Date.parse(point.bucket) / 1000);
    if (i === undefined) continue;
    if (point.target_type === 'local') local[i]! += point.calls;
    else if (point.target_type === 'cloud') cloud[i]! += point.calls;
  }
  const share = (mine: number[], other: number[]) =>
    mine.map((calls, i) => {
      const total = calls + (other[i] ?? 0);
      return total === 0 ? null : Math.round((calls / total) * 1000) / 10;
    });
  return { times: [...times], series: [{ label: 'local %', values: share(local, cloud) }, { label: 'cloud %', values: share(cloud, local) }] };
}

/** Totals over the window: local and cloud calls and the local share in percent (null without calls). */
export function trafficTotals(points: readonly CostPoint[]): { local: number; cloud: number; localShare: number | null } {
  let local = 0;
  let cloud = 0;
  for (const point of points) {
    if (point.target_type === 'local') local += point.calls;
    else if (point.target_type === 'cloud') cloud += point.calls;
  }
  return { local, cloud, localShare: local + cloud === 0 ? null : Math.round((local / (local + cloud)) * 1000) / 10 };
}

export function formatUsd(usd: number | undefined | null): string {
  if (usd === undefined || usd === null) return '—';
  return usd < 0.01 && usd > 0 ? `$${usd.toFixed(6)}` : `$${usd.toFixed(4)}`;
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function formatPercent(fraction: number | null | undefined): string {
  return fraction === null || fraction === undefined ? '—' : `${Math.round(fraction * 1000) / 10} %`;
}
