export const FAULT_MODES = ['ok', 'error', 'ratelimit', 'hang', 'slow', 'garbage', 'wrong', 'down'] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

export const DEFAULT_SLOW_DELAY_MS = 5000;
export const DEFAULT_RETRY_AFTER_S = 1;

export interface ModeChange {
  mode: FaultMode;
  delay_ms?: number | undefined;
  retry_after_s?: number | undefined;
  fail_ratio?: number | undefined;
  count?: number | undefined;
}

export interface FaultSettings {
  mode: FaultMode;
  delay_ms: number;
  retry_after_s: number;
  fail_ratio: number;
  /** Size of the window of requests the mode applies to; null = until changed. */
  count: number | null;
}

export interface FaultState {
  settings: FaultSettings;
  /** Requests decided since the mode was set: drives `fail_ratio` and `count`. */
  seen: number;
}

export type FaultDecision =
  | { kind: 'ok' }
  | { kind: 'error' }
  | { kind: 'ratelimit'; retryAfterS: number }
  | { kind: 'hang' }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'garbage' }
  | { kind: 'wrong' }
  | { kind: 'refused' };

export function faultStateFor(change: ModeChange): FaultState {
  return {
    settings: {
      mode: change.mode,
      delay_ms: change.delay_ms ?? DEFAULT_SLOW_DELAY_MS,
      retry_after_s: change.retry_after_s ?? DEFAULT_RETRY_AFTER_S,
      fail_ratio: change.fail_ratio ?? 1,
      count: change.count ?? null,
    },
    seen: 0,
  };
}

export function initialFaultState(): FaultState {
  return faultStateFor({ mode: 'ok' });
}

/**
 * Whether the n-th request (1-based) of a window gets the fault. Spreads faults evenly
 * and deterministically: ratio 0.5 faults every 2nd request, 0.25 every 4th, 0.3 the
 * 4th, 7th and 10th. The epsilon absorbs float error such as 0.57 * 100 = 56.99….
 */
export function isFaultedRequest(n: number, failRatio: number): boolean {
  const epsilon = 1e-9;
  return Math.floor(n * failRatio + epsilon) > Math.floor((n - 1) * failRatio + epsilon);
}

function decisionFor(settings: FaultSettings): FaultDecision {
  switch (settings.mode) {
    case 'ok':
      return { kind: 'ok' };
    case 'error':
      return { kind: 'error' };
    case 'ratelimit':
      return { kind: 'ratelimit', retryAfterS: settings.retry_after_s };
    case 'hang':
      return { kind: 'hang' };
    case 'slow':
      return { kind: 'slow', delayMs: settings.delay_ms };
    case 'garbage':
      return { kind: 'garbage' };
    case 'wrong':
      return { kind: 'wrong' };
    case 'down':
      return { kind: 'refused' };
  }
}

/** Decides one request and returns the state for the next; `count` exhausted means back to `ok`. */
export function decide(state: FaultState): { decision: FaultDecision; next: FaultState } {
  const { settings } = state;
  if (settings.mode === 'ok') return { decision: { kind: 'ok' }, next: state };
  // A request can only reach a `down` target on a connection opened before the switch.
  if (settings.mode === 'down') return { decision: { kind: 'refused' }, next: state };
  const n = state.seen + 1;
  const decision = isFaultedRequest(n, settings.fail_ratio) ? decisionFor(settings) : { kind: 'ok' as const };
  const exhausted = settings.count !== null && n >= settings.count;
  return { decision, next: exhausted ? initialFaultState() : { settings, seen: n } };
}

/** Modes in which a real server's health probe would fail too (`down` refuses connections outright). */
export function isHealthy(state: FaultState): boolean {
  return state.settings.mode !== 'error' && state.settings.mode !== 'hang';
}

export function remainingInWindow(state: FaultState): number | null {
  return state.settings.count === null ? null : state.settings.count - state.seen;
}
