import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { loadConfig } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { JobRepository, JobWatchRepository, WebhookOutboxRepository, type NewTaskRow } from '@switchyard/state';
import { createTestDatabase, type TestDatabase } from '@switchyard/state/testing/test-database';
import { JobNotifications, type JobChannel } from './job-notifications';

/* Real: Postgres with the real migrations (the task table's trigger) and one LISTEN connection. */

let database: TestDatabase;
let notifications: JobNotifications;
const received: Array<[JobChannel, string]> = [];

beforeAll(async () => {
  database = await createTestDatabase();
  notifications = new JobNotifications(loadConfig({ DATABASE_URL: database.url }), createLogger('test', 'silent'));
  for (const channel of ['job', 'admission', 'webhook'] as const) notifications.on(channel, (payload) => received.push([channel, payload]));
  notifications.onApplicationBootstrap();
  // LISTEN is in place once a notification sent now arrives.
  const probe = randomUUID();
  await waitFor(async () => {
    await database.db.execute(sql`select pg_notify('switchyard_job', ${probe})`);
    return received.some(([, payload]) => payload === probe);
  });
});

afterAll(async () => {
  await notifications?.onApplicationShutdown();
  await database?.destroy();
});

async function waitFor(condition: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function createJob(withCallback: boolean): Promise<{ jobId: string; taskId: string }> {
  const jobId = randomUUID();
  const taskId = randomUUID();
  const base = { jobId, tenantId: 't', jobType: 'doc_review' };
  const root: NewTaskRow = { ...base, taskId: jobId, parentTaskId: null, agentId: 'supervisor', role: 'job', inputSummary: {}, totalSteps: 2 };
  const task: NewTaskRow = { ...base, taskId, parentTaskId: jobId, agentId: 'extract-1', role: 'extract', inputSummary: {}, totalSteps: 2 };
  await new JobRepository(database.db).createJob(root, [task]);
  if (withCallback) await new WebhookOutboxRepository(database.db).setCallback('t', jobId, 'http://127.0.0.1:9/x');
  return { jobId, taskId };
}

const of = (jobId: string) => received.filter(([, payload]) => payload === jobId).map(([channel]) => channel);

describe('job notifications from the task table trigger (real Postgres)', () => {
  it('notifies a watched job on a status or step change only, and admission and webhooks when the job ends', async () => {
    const { jobId, taskId } = await createJob(true);
    const { jobId: marker } = await createJob(false);
    await new JobWatchRepository(database.db).renew('test-watcher', [jobId, marker], 30_000);
    await database.db.execute(sql`update agent_task_state set updated_at = now(), cost_usd = 1 where task_id = ${taskId}`);
    await database.db.execute(sql`update agent_task_state set current_step = 1 where task_id = ${taskId}`);
    await database.db.execute(sql`update agent_task_state set status = 'success' where job_id = ${jobId}`);
    // Notifications arrive in commit order: once the marker's is in, every earlier one is too.
    await database.db.execute(sql`update agent_task_state set status = 'running' where task_id = ${marker}`);
    await waitFor(() => of(marker).length > 0);
    // step change (1), then one job notification for the status transaction (same payload, folded), then the terminal root.
    expect(of(jobId)).toEqual(['job', 'job', 'webhook', 'admission']);
  });

  it('sends no job notification for a job nobody watches, or whose watch expired or was released; its end still wakes admission and webhooks', async () => {
    const watches = new JobWatchRepository(database.db);
    const unwatched = await createJob(true);
    const expired = await createJob(false);
    const released = await createJob(false);
    const { jobId: marker } = await createJob(false);
    await watches.renew('dead-supervisor', [expired.jobId], 0);
    await watches.renew('test-watcher', [released.jobId, marker], 30_000);
    await watches.release('test-watcher', released.jobId);
    for (const job of [unwatched, expired, released]) {
      await database.db.execute(sql`update agent_task_state set current_step = 1 where task_id = ${job.taskId}`);
      await database.db.execute(sql`update agent_task_state set status = 'success' where job_id = ${job.jobId}`);
    }
    await database.db.execute(sql`update agent_task_state set status = 'running' where task_id = ${marker}`);
    await waitFor(() => of(marker).length > 0);
    expect(of(unwatched.jobId)).toEqual(['webhook', 'admission']);
    expect(of(expired.jobId)).toEqual(['admission']);
    expect(of(released.jobId)).toEqual(['admission']);
  });

  it('a renewal deletes every expired watch row, and keeps each live one once', async () => {
    const watches = new JobWatchRepository(database.db);
    const { jobId: stale } = await createJob(false);
    const { jobId: live } = await createJob(false);
    await watches.renew('dead-supervisor', [stale], 0);
    await watches.renew('w1', [live], 30_000);
    await watches.renew('w1', [live], 30_000);
    const rows = await database.db.execute<{ job_id: string; watcher: string }>(
      sql`select job_id, watcher from job_watch where job_id in (${stale}, ${live})`,
    );
    expect(rows.rows).toEqual([{ job_id: live, watcher: 'w1' }]);
  });
});
