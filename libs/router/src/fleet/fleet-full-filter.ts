import type { Clock } from '../clock';
import type { CandidateFilter } from '../routing/candidate-filter';
import type { RoutingExplanation } from '../routing/routing-decision';
import type { LimitReason } from './target-limiter';

/** Drop reasons of a target whose fleet-wide limit was found full a moment ago. */
export const FLEET_DROP_REASONS = {
  concurrency: 'fleet_concurrency_full',
  rpm: 'fleet_rpm_quota',
  tpm: 'fleet_tpm_quota',
} as const satisfies Record<LimitReason, string>;

const FLEET_REASONS: ReadonlySet<string> = new Set(Object.values(FLEET_DROP_REASONS));

/**
 * Targets the fleet limiter refused, each until a short time after the refusal: the calls of
 * this process look elsewhere (or wait) meanwhile instead of asking Redis again.
 */
export class FleetFullMarks {
  private readonly marks = new Map<string, { until: number; reason: LimitReason }>();

  constructor(private readonly clock: Clock) {}

  mark(target: string, reason: LimitReason, forMs: number): void {
    this.marks.set(target, { until: this.clock.now() + Math.max(1, forMs), reason });
  }

  filter(): CandidateFilter {
    return (target) => {
      const mark = this.marks.get(target.name);
      if (mark === undefined) return null;
      if (this.clock.now() >= mark.until) {
        this.marks.delete(target.name);
        return null;
      }
      return { reason: FLEET_DROP_REASONS[mark.reason] };
    };
  }
}

/** Whether some candidate was held back only by a full fleet-wide limit: waiting a moment may free it. */
export function fleetSlotMayFree(explanation: RoutingExplanation): boolean {
  return explanation.candidates.some((candidate) => candidate.reason !== undefined && FLEET_REASONS.has(candidate.reason));
}
