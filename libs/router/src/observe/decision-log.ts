import type { RequestMeta } from '@switchyard/contracts';
import { addActiveSpanEvent, type Logger } from '@switchyard/observability';
import type { UpstreamError } from '../calls/upstream-error';
import type { RoutingDecision } from '../routing/routing-decision';

export interface DecisionLogEntry {
  level: 'debug' | 'info';
  message: string;
  fields: Record<string, unknown>;
}

/**
 * The structured log line of one routing decision. A routine first choice is `debug` (one per
 * upstream attempt would drown the log at `info`); a failover to another target after a failed
 * attempt, or a choice made with targets dropped by a degradation (budget, breaker, drain), is
 * `info`, so an operator sees every switch with its reason at the default level.
 */
export function decisionLogEntry(decision: RoutingDecision, meta: RequestMeta, attempt: number, previous: UpstreamError | undefined): DecisionLogEntry {
  const dropped = decision.candidates.filter((c) => !c.eligible).map((c) => ({ target: c.target, rule: c.rule, reason: c.reason ?? 'not eligible' }));
  const failover = previous !== undefined;
  const fields: Record<string, unknown> = {
    target: decision.target.name,
    target_type: decision.target.type,
    rule: decision.rule,
    matched_rules: decision.matchedRules,
    policy: decision.policy,
    attempt,
    task_type: meta.task_type,
    sensitivity: meta.sensitivity,
    dropped,
    ...(failover ? { failover_from: previous.target, failover_reason: previous.errorClass } : {}),
  };
  const degraded = dropped.length > 0 && decision.rule !== decision.matchedRules[0];
  if (failover) return { level: 'info', message: 'routing decision: failover to another target', fields };
  if (degraded) return { level: 'info', message: 'routing decision: the preferred route is unavailable', fields };
  return { level: 'debug', message: 'routing decision', fields };
}

/** Logs the decision and adds it as an event to the active span (the call's). */
export function logDecision(logger: Logger, decision: RoutingDecision, meta: RequestMeta, attempt: number, previous: UpstreamError | undefined): void {
  const entry = decisionLogEntry(decision, meta, attempt, previous);
  if (entry.level === 'info') logger.info(entry.fields, entry.message);
  else logger.debug(entry.fields, entry.message);
  addActiveSpanEvent('routing decision', {
    'switchyard.target': decision.target.name,
    'switchyard.rule': decision.rule,
    'switchyard.attempt': attempt,
    'switchyard.dropped': entry.fields.dropped ? JSON.stringify(entry.fields.dropped) : '[]',
  });
}
