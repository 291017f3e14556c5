import { and, desc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { Pool } from 'pg';
import { poolBehind, type Database } from '../database';
import { modelCallLedger as l, type NewLedgerRow } from '../schema';
import { jsonRowInsert } from './json-row-insert';

export const COST_GROUP_BY = ['target', 'model', 'tenant', 'business_type', 'outcome', 'day'] as const;
export type CostGroupBy = (typeof COST_GROUP_BY)[number];

export interface CostReportQuery {
  groupBy: CostGroupBy;
  /** Inclusive. */
  since: Date;
  /** Exclusive. */
  until: Date;
  /** One tenant's calls, or `null` for every tenant (the operator's view). Required so it is never forgotten. */
  tenantId: string | null;
}

export interface CostTotals {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** Attempts that failed: errors, bad output, and attempts abandoned by a dead worker (not those still in flight). */
  errors: number;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
}

export interface CostGroup extends CostTotals {
  /** The group's value: a target, model, tenant, business type, outcome, or UTC day (`YYYY-MM-DD`); null where unset. */
  key: string | null;
}

export interface CostReport {
  groups: CostGroup[];
  totals: CostTotals;
}

/** Rows go in as one JSON array per batch: a single prepared statement whatever the batch size. */
const ledgerInsert = jsonRowInsert<NewLedgerRow>(
  l,
  { at: 'now()', input_tokens: '0', output_tokens: '0', usage_estimated: 'false', cost_usd: '0' },
  { generated: ['id'] },
);
const INSERT_SQL = `/* sy:insertLedger */ ${ledgerInsert.insertFromArray(1)}`;

const GROUP_KEY: Record<CostGroupBy, SQL<string | null>> = {
  target: sql<string>`${l.target}`,
  model: sql<string>`${l.model}`,
  tenant: sql<string>`${l.tenantId}`,
  business_type: sql<string | null>`${l.businessType}`,
  outcome: sql<string>`${l.outcome}`,
  day: sql<string>`to_char(date_trunc('day', ${l.at} at time zone 'UTC'), 'YYYY-MM-DD')`,
};

const toNumber = (v: unknown) => Number(v);
const toNullableNumber = (v: unknown) => (v === null || v === undefined ? null : Number(v));

const totalColumns = {
  calls: sql<number>`count(*)`.mapWith(toNumber),
  inputTokens: sql<number>`coalesce(sum(${l.inputTokens}), 0)`.mapWith(toNumber),
  outputTokens: sql<number>`coalesce(sum(${l.outputTokens}), 0)`.mapWith(toNumber),
  costUsd: sql<number>`coalesce(sum(${l.costUsd}), 0)`.mapWith(toNumber),
  // An attempt still in flight has no outcome yet; one abandoned by a dead worker failed.
  errors: sql<number>`count(*) filter (where ${l.outcome} not in ('ok', 'in_flight'))`.mapWith(toNumber),
  latencyP50Ms: sql<number | null>`percentile_cont(0.5) within group (order by ${l.latencyMs})`.mapWith(toNullableNumber),
  latencyP95Ms: sql<number | null>`percentile_cont(0.95) within group (order by ${l.latencyMs})`.mapWith(toNullableNumber),
};

/** The cost ledger: written in batches by the ledger writer, read by `GET /admin/costs`. */
export class LedgerRepository {
  private readonly pool: Pool;

  /** `pool` is the one behind `db` (`DatabaseHandle.pool`); when omitted, drizzle's client is used. */
  constructor(
    private readonly db: Database,
    pool?: Pool,
  ) {
    this.pool = poolBehind(db, pool, 'LedgerRepository');
  }

  /** Writes the rows in one statement, all or nothing. */
  async insertMany(rows: readonly NewLedgerRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.pool.query({ name: 'sy-insert-ledger', text: INSERT_SQL, values: [JSON.stringify(rows.map(ledgerInsert.toJson))] });
  }

  /** Totals per group over `[since, until)`, most expensive group first, and the totals of the whole window. */
  async costReport(query: CostReportQuery): Promise<CostReport> {
    const where = and(
      gte(l.at, query.since),
      lt(l.at, query.until),
      query.tenantId === null ? undefined : eq(l.tenantId, query.tenantId),
    );
    const key = GROUP_KEY[query.groupBy];
    const [groups, totals] = await Promise.all([
      this.db
        .select({ key, ...totalColumns })
        .from(l)
        .where(where)
        .groupBy(key)
        .orderBy(desc(totalColumns.costUsd), desc(totalColumns.calls), key),
      this.db.select(totalColumns).from(l).where(where),
    ]);
    return { groups, totals: totals[0] ?? emptyTotals() };
  }
}

function emptyTotals(): CostTotals {
  return { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, errors: 0, latencyP50Ms: null, latencyP95Ms: null };
}
