import { ValidationError } from '@switchyard/contracts';
import { parseCostReportQuery } from './cost-report.query';

const now = new Date('2026-03-10T12:00:00.000Z');

function issuesOf(query: unknown) {
  try {
    parseCostReportQuery(query, now);
  } catch (error) {
    if (error instanceof ValidationError) return error.issues;
    throw error;
  }
  throw new Error('expected a ValidationError');
}

describe('parseCostReportQuery', () => {
  it('defaults to group_by=target over the last 24 h, every tenant', () => {
    expect(parseCostReportQuery({}, now)).toEqual({
      groupBy: 'target',
      since: new Date('2026-03-09T12:00:00.000Z'),
      until: now,
      tenantId: null,
    });
  });

  it('takes group_by, since, until (date-times or dates) and tenant', () => {
    expect(parseCostReportQuery({ group_by: 'day', since: '2026-03-01', until: '2026-03-05T00:00:00+02:00', tenant: 'acme' }, now)).toEqual({
      groupBy: 'day',
      since: new Date('2026-03-01T00:00:00.000Z'),
      until: new Date('2026-03-04T22:00:00.000Z'),
      tenantId: 'acme',
    });
    for (const groupBy of ['target', 'model', 'tenant', 'business_type', 'outcome', 'day']) {
      expect(parseCostReportQuery({ group_by: groupBy }, now).groupBy).toBe(groupBy);
    }
  });

  it('defaults since to 24 h before a given until', () => {
    expect(parseCostReportQuery({ until: '2026-01-02T00:00:00Z' }, now).since).toEqual(new Date('2026-01-01T00:00:00Z'));
  });

  it.each([
    [{ group_by: 'colour' }, 'query.group_by', /must be one of target, model, tenant, business_type, outcome, day/],
    [{ since: 'yesterday' }, 'query.since', /ISO 8601/],
    [{ until: '2026-13-01' }, 'query.until', /ISO 8601/],
    [{ since: '2026-03-10', until: '2026-03-09' }, 'query.since', /before until/],
    [{ since: '2020-01-01', until: '2026-01-01' }, 'query.since', /at most 400 days/],
    [{ tenant: '' }, 'query.tenant', /./],
    [{ colour: 'red' }, 'query', /unknown field: colour/],
  ])('rejects %j naming %s', (query, path, message) => {
    const issues = issuesOf(query);
    expect(issues).toEqual([expect.objectContaining({ path, message: expect.stringMatching(message) })]);
  });

  it('refuses instants outside the years Postgres timestamps take (0001–9999 UTC), naming the parameter', () => {
    expect(issuesOf({ since: '0000-01-01', until: '0000-12-31' })).toEqual([
      { path: 'query.since', message: 'must be between 0001-01-01 and 9999-12-31 (UTC)' },
      { path: 'query.until', message: 'must be between 0001-01-01 and 9999-12-31 (UTC)' },
    ]);
    expect(issuesOf({ since: '0001-01-01T00:00:00+01:00', until: '0001-01-02' }).map((i) => i.path)).toEqual(['query.since']);
    expect(issuesOf({ since: '9999-12-31T00:00:00Z', until: '9999-12-31T23:00:00-02:00' }).map((i) => i.path)).toEqual(['query.until']);
    expect(parseCostReportQuery({ since: '0001-01-01', until: '0001-01-02' }, now).since).toEqual(new Date('0001-01-01T00:00:00.000Z'));
  });
});
