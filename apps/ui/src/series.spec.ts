import { bucketTimes, formatMs, localCloudShare, seriesByKey, trafficTotals, type CostPoint } from './series';

const since = new Date('2030-01-01T10:00:00Z');
const until = new Date('2030-01-01T10:03:00Z');
const at = (minute: number) => new Date(since.getTime() + minute * 60_000).toISOString();
const point = (minute: number, key: string, targetType: string | null, calls: number, cost = 0): CostPoint => ({
  bucket: at(minute),
  key,
  target_type: targetType,
  calls,
  errors: 0,
  cost_usd: cost,
});

describe('dashboard series', () => {
  const times = bucketTimes(since, until, 60);

  it('lists every bucket of the window', () => {
    expect(times).toEqual([0, 1, 2].map((m) => Date.parse(at(m)) / 1000));
  });

  it('gives each key a line with zero in its quiet buckets', () => {
    const columns = seriesByKey([point(0, 'local_7b', 'local', 2, 0.5), point(2, 'local_7b', 'local', 1, 0.25), point(1, 'cloud', 'cloud', 1, 1)], times, 'cost_usd');
    expect(columns.series).toEqual([
      { label: 'cloud', values: [0, 1, 0] },
      { label: 'local_7b', values: [0.5, 0, 0.25] },
    ]);
  });

  it('computes the local and cloud share of calls per bucket, with no share where there were no calls', () => {
    const columns = localCloudShare([point(0, 'local_7b', 'local', 3), point(0, 'local_32b', 'local', 1), point(0, 'cloud', 'cloud', 1), point(2, 'cloud', 'cloud', 2)], times);
    expect(columns.series).toEqual([
      { label: 'local %', values: [80, null, 0] },
      { label: 'cloud %', values: [20, null, 100] },
    ]);
    expect(trafficTotals([point(0, 'a', 'local', 3), point(1, 'b', 'cloud', 1)])).toEqual({ local: 3, cloud: 1, localShare: 75 });
    expect(trafficTotals([])).toEqual({ local: 0, cloud: 0, localShare: null });
  });

  it('formats durations for people', () => {
    expect([formatMs(null), formatMs(12.4), formatMs(1530), formatMs(125_000)]).toEqual(['—', '12 ms', '1.5 s', '2 min 5 s']);
  });
});
