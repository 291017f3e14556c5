import { decide, type FaultDecision, faultStateFor, initialFaultState, isFaultedRequest, isHealthy, type ModeChange, remainingInWindow } from './fault-state';

function run(change: ModeChange, requests: number): { kinds: FaultDecision['kind'][]; finalMode: string } {
  let state = faultStateFor(change);
  const kinds: FaultDecision['kind'][] = [];
  for (let i = 0; i < requests; i += 1) {
    const { decision, next } = decide(state);
    kinds.push(decision.kind);
    state = next;
  }
  return { kinds, finalMode: state.settings.mode };
}

describe('fault state', () => {
  it('defaults: ok, 5000 ms slow delay, Retry-After 1, every request, no window', () => {
    expect(initialFaultState()).toEqual({ settings: { mode: 'ok', delay_ms: 5000, retry_after_s: 1, fail_ratio: 1, count: null }, seen: 0 });
  });

  it('spreads fail_ratio evenly and exactly', () => {
    const faulted = (ratio: number, n: number) => Array.from({ length: n }, (_, i) => isFaultedRequest(i + 1, ratio));
    expect(faulted(1, 3)).toEqual([true, true, true]);
    expect(faulted(0, 3)).toEqual([false, false, false]);
    expect(faulted(0.5, 4)).toEqual([false, true, false, true]);
    expect(faulted(0.3, 10).flatMap((hit, i) => (hit ? [i + 1] : []))).toEqual([4, 7, 10]);
    for (const ratio of [0.1, 0.3, 0.57, 0.7, 0.99]) {
      expect(faulted(ratio, 100).filter(Boolean)).toHaveLength(Math.round(ratio * 100));
    }
  });

  it('count: the next N requests, then back to ok', () => {
    expect(run({ mode: 'error', count: 2 }, 4)).toEqual({ kinds: ['error', 'error', 'ok', 'ok'], finalMode: 'ok' });
    expect(run({ mode: 'hang', fail_ratio: 0.5, count: 4 }, 6).kinds).toEqual(['ok', 'hang', 'ok', 'hang', 'ok', 'ok']);
  });

  it('carries mode parameters into the decision', () => {
    expect(decide(faultStateFor({ mode: 'ratelimit', retry_after_s: 9 })).decision).toEqual({ kind: 'ratelimit', retryAfterS: 9 });
    expect(decide(faultStateFor({ mode: 'slow', delay_ms: 150 })).decision).toEqual({ kind: 'slow', delayMs: 150 });
  });

  it('down refuses without consuming anything; ok never changes', () => {
    const down = faultStateFor({ mode: 'down' });
    expect(decide(down)).toEqual({ decision: { kind: 'refused' }, next: down });
    const ok = initialFaultState();
    expect(decide(ok).next).toBe(ok);
  });

  it('reports health and the remaining window', () => {
    expect(isHealthy(faultStateFor({ mode: 'error' }))).toBe(false);
    expect(isHealthy(faultStateFor({ mode: 'hang' }))).toBe(false);
    expect(isHealthy(faultStateFor({ mode: 'slow' }))).toBe(true);
    const state = faultStateFor({ mode: 'error', count: 3 });
    expect(remainingInWindow(decide(state).next)).toBe(2);
    expect(remainingInWindow(initialFaultState())).toBeNull();
  });
});
