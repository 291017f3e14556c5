import type { CandidateFilter } from './candidate-filter';
import { NoEligibleTargetError } from './no-eligible-target.error';

/** Why every target is dropped while the operator's read-only switch is on. */
export const READ_ONLY_REASON = 'read_only_mode';

/** Drops every target: in read-only mode no model call leaves the router. */
export const readOnlyFilter: CandidateFilter = () => ({ reason: READ_ONLY_REASON });

/**
 * The operator switched the fleet to read-only (seed 004 §4.3, a double outage): no upstream
 * model call is made, only cached answers are served. A `NoEligibleTargetError` with the same
 * code, so durable tasks wait for the switch to go off as they wait for a target to recover;
 * the gateway tells its clients apart (503 `read_only`).
 */
export class ReadOnlyModeError extends NoEligibleTargetError {
  constructor(explanation: NoEligibleTargetError['explanation'], meta: NoEligibleTargetError['meta']) {
    super(explanation, meta);
    this.name = 'ReadOnlyModeError';
    this.message = `read-only mode: an operator turned model calls off fleet-wide; only cached answers are served (${this.message})`;
  }
}
