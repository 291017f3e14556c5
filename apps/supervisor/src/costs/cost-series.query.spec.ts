import { ValidationError } from '@switchyard/contracts';
import { parseCostSeriesQuery } from './cost-series.query';

const now = new Date('2030-06-01T12:00:00Z');

describe('parseCostSeriesQuery', () => {
  it('defaults to the last hour by target in one-minute buckets', () => {
    expect(parseCostSeriesQuery({}, now)).toEqual({ by: 'target', since: new Date('2030-06-01T11:00:00Z'), until: now, bucketSeconds: 60 });
  });

  it('refuses an unknown grouping, a reversed window and too many buckets, naming the parameter', () => {
    const issues = (query: unknown) => {
      try {
        parseCostSeriesQuery(query, now);
        return [];
      } catch (error) {
        return (error as ValidationError).issues.map((issue) => issue.path);
      }
    };
    expect(issues({ by: 'model' })).toEqual(['query.by']);
    expect(issues({ since: '2030-06-01T13:00:00Z' })).toEqual(['query.since']);
    expect(issues({ since: '2030-01-01T00:00:00Z', bucket_seconds: '10' })).toEqual(['query.bucket_seconds']);
  });
});
