import { Controller, Get, Inject, Query, UseGuards } from '@nestjs/common';
import { AdminJobRepository, LedgerRepository, type CostTotals } from '@switchyard/state';
import { AdminTokenGuard } from '../auth/admin-token.guard';
import { parseCostReportQuery } from './cost-report.query';
import { parseCostSeriesQuery } from './cost-series.query';

/** Latencies are stored as `real`: show them to a tenth of a millisecond, not float noise. */
const tenth = (ms: number | null) => (ms === null ? null : Math.round(ms * 10) / 10);

function presentTotals(totals: CostTotals) {
  return {
    calls: totals.calls,
    input_tokens: totals.inputTokens,
    output_tokens: totals.outputTokens,
    cost_usd: totals.costUsd,
    errors: totals.errors,
    latency_p50_ms: tenth(totals.latencyP50Ms),
    latency_p95_ms: tenth(totals.latencyP95Ms),
  };
}

/**
 * `GET /admin/costs`: the cost ledger summed per target, model, tenant, business type, outcome or day;
 * `GET /admin/costs/series`: the same ledger per time bucket and target or tenant (the dashboard's charts).
 */
@Controller('admin/costs')
@UseGuards(AdminTokenGuard)
export class CostsController {
  constructor(
    @Inject(LedgerRepository) private readonly ledger: LedgerRepository,
    private readonly adminReads: AdminJobRepository,
  ) {}

  @Get('series')
  async series(@Query() query: unknown) {
    const q = parseCostSeriesQuery(query);
    const points = await this.adminReads.costSeries(q);
    return {
      by: q.by,
      since: q.since.toISOString(),
      until: q.until.toISOString(),
      bucket_seconds: q.bucketSeconds,
      points: points.map((p) => ({ bucket: p.bucket.toISOString(), key: p.key, target_type: p.targetType, calls: p.calls, errors: p.errors, cost_usd: p.costUsd })),
    };
  }

  @Get()
  async report(@Query() query: unknown) {
    const q = parseCostReportQuery(query);
    const report = await this.ledger.costReport(q);
    return {
      group_by: q.groupBy,
      since: q.since.toISOString(),
      until: q.until.toISOString(),
      tenant: q.tenantId,
      groups: report.groups.map((g) => ({ key: g.key, ...presentTotals(g) })),
      totals: presentTotals(report.totals),
    };
  }
}
