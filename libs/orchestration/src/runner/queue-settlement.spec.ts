import type { TaskPayload } from '@switchyard/contracts';
import { BLOCKED_RECHECK_MS, BUSY_RECHECK_MS, settlementFor, targetWaitDelayMs } from './queue-settlement';

const payload: TaskPayload = { tenant_id: 't', job_id: '00000000-0000-4000-8000-000000000001', task_id: '00000000-0000-4000-8000-000000000002', trace: {} };
const NOW = 1_000_000;

describe('settlementFor', () => {
  it.each(['completed', 'already_done', 'lease_lost'] as const)('completes the queue job on %s', (kind) => {
    expect(settlementFor({ kind, taskId: payload.task_id }, payload, NOW)).toEqual({ action: 'complete', value: { outcome: kind } });
  });

  it('delays a duplicate delivery and a blocked fan-in without spending an attempt', () => {
    expect(settlementFor({ kind: 'busy', taskId: 'x' }, payload, NOW)).toMatchObject({ action: 'delay', untilMs: NOW + BUSY_RECHECK_MS });
    expect(settlementFor({ kind: 'busy', taskId: 'x', waitingFor: 'dependencies' }, payload, NOW)).toMatchObject({
      action: 'delay',
      untilMs: NOW + BLOCKED_RECHECK_MS,
    });
  });

  it('waits for a model target with a growing pause and remembers since when', () => {
    const first = settlementFor({ kind: 'waiting_for_target', taskId: 'x', reason: 'none' }, payload, NOW, () => 1);
    expect(first).toEqual(expect.objectContaining({ action: 'delay', untilMs: NOW + 1_000, data: { ...payload, waiting: { since: NOW, checks: 1 } } }));
    const later = settlementFor({ kind: 'waiting_for_target', taskId: 'x', reason: 'none' }, { ...payload, waiting: { since: NOW, checks: 4 } }, NOW + 20_000, () => 1);
    expect(later).toEqual(expect.objectContaining({ untilMs: NOW + 20_000 + 15_000, data: { ...payload, waiting: { since: NOW, checks: 5 } } }));
    expect([1, 2, 3, 4, 5, 9].map((checks) => targetWaitDelayMs(checks, () => 1))).toEqual([1_000, 2_000, 4_000, 8_000, 15_000, 15_000]);
    // The second half of each pause is jitter.
    expect([1, 2, 5].map((checks) => targetWaitDelayMs(checks, () => 0))).toEqual([500, 1_000, 7_500]);
  });

  it('retries a released task with its error, and fails failed or unrunnable ones for good', () => {
    const error = new Error('upstream 500');
    expect(settlementFor({ kind: 'released', taskId: 'x', error }, payload, NOW)).toEqual({ action: 'retry', error });
    expect(settlementFor({ kind: 'released', taskId: 'x', error: 'text' }, payload, NOW)).toEqual({ action: 'retry', error: new Error('text') });
    expect(settlementFor({ kind: 'failed', taskId: 'x', reason: 'gave up', jobFailed: true }, payload, NOW)).toEqual({ action: 'fail', reason: 'gave up' });
    expect(settlementFor({ kind: 'not_runnable', taskId: 'x', status: 'cancelled' }, payload, NOW)).toEqual({
      action: 'fail',
      reason: `task ${payload.task_id} is cancelled`,
    });
  });
});
