import { z } from 'zod';
import { SafeString, ValidationError, toFieldIssues } from '@switchyard/contracts';
import { COST_GROUP_BY, type CostReportQuery } from '@switchyard/state';

const DAY_MS = 86_400_000;
/** Postgres takes earlier and later timestamps, but the ISO forms accepted here cannot write them: refuse year 0000 and its neighbours. */
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
const LATEST_EXCLUSIVE = Date.parse('+010000-01-01T00:00:00Z');
const OUT_OF_RANGE = 'must be between 0001-01-01 and 9999-12-31 (UTC)';

/** The widest window one report may cover. */
export const MAX_COST_WINDOW_DAYS = 400;

const instant = z.union([z.iso.datetime({ offset: true }), z.iso.date()], {
  error: 'must be an ISO 8601 date-time (2026-01-31T12:00:00Z) or date (2026-01-31)',
});

export const CostReportQuerySchema = z.strictObject({
  group_by: z.enum(COST_GROUP_BY, { error: `must be one of ${COST_GROUP_BY.join(', ')}` }).default('target'),
  since: instant.optional(),
  until: instant.optional(),
  tenant: SafeString.min(1).max(64).optional(),
});

/**
 * `GET /admin/costs` query: `group_by` (default target), `since` / `until` (default the
 * last 24 h ending now; `until` exclusive), optional `tenant`. Errors name the parameter.
 */
export function parseCostReportQuery(query: unknown, now: Date = new Date()): CostReportQuery {
  const parsed = CostReportQuerySchema.safeParse(query ?? {});
  if (!parsed.success) throw new ValidationError(toFieldIssues(parsed.error, 'query'));
  const { group_by, since, until, tenant } = parsed.data;
  const untilDate = until === undefined ? now : new Date(until);
  const sinceDate = since === undefined ? new Date(untilDate.getTime() - DAY_MS) : new Date(since);
  const outOfRange = (
    [
      ['since', sinceDate],
      ['until', untilDate],
    ] as const
  ).filter(([, date]) => !(date.getTime() >= EARLIEST && date.getTime() < LATEST_EXCLUSIVE));
  if (outOfRange.length > 0) throw new ValidationError(outOfRange.map(([name]) => ({ path: `query.${name}`, message: OUT_OF_RANGE })));
  if (sinceDate.getTime() >= untilDate.getTime()) {
    throw new ValidationError([{ path: 'query.since', message: `must be before until (${untilDate.toISOString()})` }]);
  }
  if (untilDate.getTime() - sinceDate.getTime() > MAX_COST_WINDOW_DAYS * DAY_MS) {
    throw new ValidationError([{ path: 'query.since', message: `the window may span at most ${MAX_COST_WINDOW_DAYS} days` }]);
  }
  return { groupBy: group_by, since: sinceDate, until: untilDate, tenantId: tenant ?? null };
}
