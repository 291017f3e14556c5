import { randomUUID } from 'node:crypto';
import type { TaskStatus } from '@switchyard/contracts';
import { agentTaskState, type NewTaskRow } from '../schema';
import { createTestDatabase, type TestDatabase } from '../testing/test-database';
import { JobStatsRepository } from './job-stats.repository';

// Real Postgres with the real migrations; a database of its own, so the counts are exact.
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.destroy();
});

function task(status: TaskStatus, parentTaskId: string | null): NewTaskRow {
  const taskId = randomUUID();
  return {
    taskId,
    jobId: parentTaskId ?? taskId,
    parentTaskId,
    tenantId: 'acme',
    jobType: 'doc_review',
    agentId: parentTaskId ? 'extract-1' : 'supervisor',
    role: parentTaskId ? 'extract' : 'job',
    status,
    inputSummary: {},
    totalSteps: 2,
  };
}

describe('JobStatsRepository', () => {
  it('counts jobs (not their tasks) per status, every status present', async () => {
    const repo = new JobStatsRepository(database.db);
    expect(await repo.countJobsByStatus()).toEqual({ pending: 0, running: 0, success: 0, failed: 0, paused: 0, cancelled: 0, queued: 0, skipped: 0 });

    const running = task('running', null);
    await database.db.insert(agentTaskState).values([running, task('success', null), task('success', null), task('failed', null)]);
    await database.db.insert(agentTaskState).values([task('running', running.taskId!), task('pending', running.taskId!)]);

    expect(await repo.countJobsByStatus()).toEqual({ pending: 0, running: 1, success: 2, failed: 1, paused: 0, cancelled: 0, queued: 0, skipped: 0 });
  });
});
