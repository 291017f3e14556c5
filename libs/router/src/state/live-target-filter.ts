import type { Clock } from '../clock';
import type { OverloadSettings } from '../quota/overload';
import { isOverloaded } from '../quota/overload';
import { quotaHeadroom } from '../quota/rate-window';
import type { CandidateDrop, CandidateFilter } from '../routing/candidate-filter';
import type { TargetStateRegistry } from './target-state';

export const LIVE_DROP_REASONS = {
  drained: 'drained',
  coldStart: 'cold_start',
  breakerOpen: 'breaker_open',
  unhealthy: 'unhealthy',
  canaryFailing: 'canary_failing',
  rateLimited: 'rate_limited',
  concurrency: 'concurrency_full',
  overloaded: 'overloaded',
  rpm: 'rpm_quota',
  tpm: 'tpm_quota',
  recovering: 'recovering',
} as const;

const drop = (reason: string): CandidateDrop => ({ reason });
const DRAINED = drop(LIVE_DROP_REASONS.drained);
const COLD_START = drop(LIVE_DROP_REASONS.coldStart);
const BREAKER_OPEN = drop(LIVE_DROP_REASONS.breakerOpen);
const UNHEALTHY = drop(LIVE_DROP_REASONS.unhealthy);
const CANARY_FAILING = drop(LIVE_DROP_REASONS.canaryFailing);
const RATE_LIMITED = drop(LIVE_DROP_REASONS.rateLimited);
const CONCURRENCY = drop(LIVE_DROP_REASONS.concurrency);
const OVERLOADED = drop(LIVE_DROP_REASONS.overloaded);
const RPM = drop(LIVE_DROP_REASONS.rpm);
const TPM = drop(LIVE_DROP_REASONS.tpm);
const RECOVERING = drop(LIVE_DROP_REASONS.recovering);

export interface LiveFilterOptions {
  overload: OverloadSettings;
  /** 0..1; decides whether a recovering target takes this call. */
  random: () => number;
  /** When false, a recovering target's share is not applied (the retry when nothing else is left). */
  applyShare: boolean;
}

/**
 * The candidate filter over live state (SPEC §3.3, §3.8, §3.9): drained, cold start, breaker, health, canaries,
 * a 429 cool-down, concurrency and overload (non-sensitive calls only: sensitive work
 * waits in the local target's queue instead of spilling), RPM/TPM headroom, recovery share.
 */
export function liveTargetFilter(registry: TargetStateRegistry, clock: Clock, options: LiveFilterOptions): CandidateFilter {
  return (target, meta) => {
    const state = registry.get(target.name);
    if (state === undefined) return null;
    if (state.drained) return DRAINED;
    // A model still loading (the probes say so) would only fail the call and count against it.
    if (state.coldStart) return COLD_START;
    const now = clock.now();
    if (!state.breaker.allows(now)) return BREAKER_OPEN;
    if (state.health.isExcluded(now)) return UNHEALTHY;
    // Past its exclusion an unhealthy target gets one trial call at a time.
    if (state.health.isBelowThreshold() && state.inFlight > 0) return UNHEALTHY;
    // It answers, but its answers fail the business canaries.
    if (state.canary.failing) return CANARY_FAILING;
    if (now < state.coolingUntil) return RATE_LIMITED;
    if (meta.sensitivity !== 'sensitive') {
      if (state.inFlight >= target.max_concurrency) return CONCURRENCY;
      if (target.type === 'local' && isOverloaded(state.window.meanFirstTokenMs(now), state.inFlight, target.max_concurrency, options.overload)) {
        return OVERLOADED;
      }
    }
    if (target.rpm !== undefined || target.tpm !== undefined) {
      const tokens = (meta.estimated_input_tokens ?? 0) + (meta.max_output_tokens ?? 0);
      const short = quotaHeadroom(state.rate, target, now, tokens);
      if (short === 'rpm') return RPM;
      if (short === 'tpm') return TPM;
    }
    if (options.applyShare && state.ramp.recovering && state.breaker.state(now) === 'closed') {
      const share = state.ramp.share(now);
      if (share < 100 && options.random() * 100 >= share) return RECOVERING;
    }
    return null;
  };
}
