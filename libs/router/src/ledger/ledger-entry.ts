import type { AttemptEvent, AttemptStart } from '../observe/call-observer';

export type LedgerSource = 'worker' | 'gateway';

/**
 * An attempt's outcome, or `in_flight` (its request sent, no outcome yet) and `abandoned`
 * (it was in flight when its worker died; usage and cost are the pre-call estimate).
 */
export type LedgerOutcome = AttemptEvent['outcome'] | 'in_flight' | 'abandoned';

/**
 * One cost-ledger row, as the `model_call_ledger` table takes it. Declared here so the
 * router does not depend on the state lib; the repository's insert type matches it.
 */
export interface LedgerEntry {
  at: Date;
  source: LedgerSource;
  tenantId: string;
  jobId: string | null;
  taskId: string | null;
  step: number | null;
  businessType: string | null;
  target: string;
  targetType: string;
  model: string;
  rule: string;
  outcome: LedgerOutcome;
  errorClass: string | null;
  httpStatus: number | null;
  inputTokens: number;
  outputTokens: number;
  usageEstimated: boolean;
  latencyMs: number;
  firstTokenMs: number | null;
  costUsd: number;
  traceId: string | null;
}

/** Calls without a tenant in their context (the gateway's own, probes) are booked here. */
export const UNATTRIBUTED_TENANT = 'gateway';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INT4_MAX = 2_147_483_647;

/**
 * Maps an attempt to its ledger row. Values that the table would refuse (a job id that is
 * not a UUID, fractional or negative tokens) are normalised here: one bad row must never
 * make a whole batch fail forever.
 */
export function toLedgerEntry(event: AttemptEvent, source: LedgerSource): LedgerEntry {
  const context = event.context;
  return {
    at: event.at,
    source,
    tenantId: context?.tenantId ?? UNATTRIBUTED_TENANT,
    jobId: uuidOrNull(context?.jobId),
    taskId: uuidOrNull(context?.taskId),
    step: context?.step === undefined ? null : int(context.step),
    businessType: event.meta.business_type ?? null,
    target: event.target.name,
    targetType: event.target.type,
    model: event.target.model,
    rule: event.rule,
    outcome: event.outcome,
    errorClass: event.errorClass ?? null,
    httpStatus: event.status === undefined ? null : int(event.status),
    inputTokens: int(event.usage?.inputTokens ?? 0),
    outputTokens: int(event.usage?.outputTokens ?? 0),
    usageEstimated: event.usage?.estimated ?? false,
    latencyMs: finite(event.latencyMs),
    firstTokenMs: event.firstTokenMs === undefined ? null : finite(event.firstTokenMs),
    costUsd: finite(event.costUsd),
    traceId: context?.traceId ?? null,
  };
}

/** The row of an attempt whose request is about to be sent: in flight, with the estimated input and its price. */
export function toStartedLedgerEntry(start: AttemptStart, source: LedgerSource): LedgerEntry {
  return {
    ...toLedgerEntry(
      {
        at: start.at,
        target: start.target,
        rule: start.rule,
        meta: start.meta,
        context: start.context,
        outcome: 'error',
        usage: { inputTokens: start.estimatedInputTokens, outputTokens: 0, estimated: true },
        latencyMs: 0,
        costUsd: start.estimatedInputCostUsd,
        attempt: start.attempt,
      },
      source,
    ),
    outcome: 'in_flight',
  };
}

function uuidOrNull(value: string | undefined): string | null {
  return value !== undefined && UUID.test(value) ? value : null;
}

function int(value: number): number {
  return Number.isFinite(value) ? Math.min(INT4_MAX, Math.max(0, Math.round(value))) : 0;
}

function finite(value: number): number {
  return Number.isFinite(value) && value > 0 ? value : 0;
}
