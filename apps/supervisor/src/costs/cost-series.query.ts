import { z } from 'zod';
import { ValidationError, toFieldIssues } from '@switchyard/contracts';
import { COST_SERIES_BY, type CostSeriesQuery } from '@switchyard/state';

const HOUR_MS = 3_600_000;
/** At most this many buckets per series, so a wide window with a small bucket cannot ask for millions of rows. */
export const MAX_SERIES_BUCKETS = 2_000;

export const CostSeriesQuerySchema = z.strictObject({
  by: z.enum(COST_SERIES_BY, { error: `must be one of ${COST_SERIES_BY.join(', ')}` }).default('target'),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  bucket_seconds: z.coerce.number().int().min(10).max(86_400).default(60),
});

/**
 * `GET /admin/costs/series` query: `by` target (default) or tenant, `since` / `until`
 * (default the last hour ending now), `bucket_seconds` (default 60).
 */
export function parseCostSeriesQuery(query: unknown, now: Date = new Date()): CostSeriesQuery {
  const parsed = CostSeriesQuerySchema.safeParse(query ?? {});
  if (!parsed.success) throw new ValidationError(toFieldIssues(parsed.error, 'query'));
  const { by, since, until, bucket_seconds } = parsed.data;
  const untilDate = until === undefined ? now : new Date(until);
  const sinceDate = since === undefined ? new Date(untilDate.getTime() - HOUR_MS) : new Date(since);
  if (sinceDate.getTime() >= untilDate.getTime()) {
    throw new ValidationError([{ path: 'query.since', message: `must be before until (${untilDate.toISOString()})` }]);
  }
  if ((untilDate.getTime() - sinceDate.getTime()) / (bucket_seconds * 1000) > MAX_SERIES_BUCKETS) {
    throw new ValidationError([{ path: 'query.bucket_seconds', message: `the window holds more than ${MAX_SERIES_BUCKETS} buckets of this size` }]);
  }
  return { by, since: sinceDate, until: untilDate, bucketSeconds: bucket_seconds };
}
