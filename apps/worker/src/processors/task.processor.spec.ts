import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { DelayedError, type Job } from 'bullmq';
import { createLogger } from '@switchyard/observability';
import type { RunOutcome, TaskRunner } from '@switchyard/orchestration';
import { ShutdownSignal } from './shutdown-signal';
import { BLOCKED_RECHECK_MS, BUSY_RECHECK_MS } from '@switchyard/orchestration';
import { TaskProcessor } from './task.processor';

function setup(outcome: RunOutcome) {
  const runner = { run: jest.fn(async () => outcome) } as unknown as TaskRunner;
  const processor = new TaskProcessor(runner, new ShutdownSignal(), createLogger('processor-spec', 'silent'));
  const moveToDelayed = jest.fn(async () => undefined);
  const job = {
    data: { tenant_id: 'acme', job_id: randomUUID(), task_id: randomUUID(), trace: {} },
    attemptsMade: 0,
    opts: { attempts: 3 },
    moveToDelayed,
    updateData: jest.fn(async () => undefined),
  } as unknown as Job;
  return { processor, job, moveToDelayed };
}

describe('TaskProcessor outcome mapping (recovery)', () => {
  it('rechecks soon, without spending an attempt, when the fan-in dependencies are unfinished', async () => {
    const { processor, job, moveToDelayed } = setup({ kind: 'busy', taskId: 't', waitingFor: 'dependencies' });
    const before = Date.now();
    await expect(processor.process('synthesize', job, 'token')).rejects.toBeInstanceOf(DelayedError);
    const [[at, token]] = moveToDelayed.mock.calls as unknown as [[number, string]];
    expect(token).toBe('token');
    expect(at - before).toBeGreaterThanOrEqual(BLOCKED_RECHECK_MS);
    expect(at - before).toBeLessThan(BUSY_RECHECK_MS);
  });

  it('rechecks later when another worker holds the task (a duplicate delivery)', async () => {
    const { processor, job, moveToDelayed } = setup({ kind: 'busy', taskId: 't', waitingFor: 'owner' });
    const before = Date.now();
    await expect(processor.process('synthesize', job, 'token')).rejects.toBeInstanceOf(DelayedError);
    const [[at]] = moveToDelayed.mock.calls as unknown as [[number]];
    expect(at - before).toBeGreaterThanOrEqual(BUSY_RECHECK_MS);
  });

  it('completes the queue job of a worker that lost its lease (the new owner finishes the task)', async () => {
    const { processor, job, moveToDelayed } = setup({ kind: 'lease_lost', taskId: 't' });
    await expect(processor.process('synthesize', job, 'token')).resolves.toEqual({ outcome: 'lease_lost' });
    expect(moveToDelayed).not.toHaveBeenCalled();
  });
});
