import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { createLogger } from '@switchyard/observability';
import { JobRepository, TaskLeaseRepository, WebhookOutboxRepository, connectDatabase, type DatabaseHandle, type NewTaskRow } from '@switchyard/state';
import { createTestDatabase, type TestDatabase } from '@switchyard/state/testing/test-database';
import { verifyWebhook } from '@switchyard/workflows';
import { presentJob } from '../jobs/job.presenter';
import { WebhookDelivery } from './webhook-delivery';
import { webhookSender, type SendWebhook } from './webhook-sender';

/*
 * Real: Postgres with the real migrations (the trigger writes the outbox rows), the claim and
 * record statements, the HTTP sender, a local HTTP receiver. A "restart" is a delivery loop on
 * its own pool that dies after a POST and before recording it, then a new loop on a new pool.
 */

const SECRET = 'test-webhook-secret-0123456789';
const logger = createLogger('test', 'silent');
let database: TestDatabase;
let server: Server;
let baseUrl: string;
const received: Array<{ path: string; body: string; signature: string }> = [];
let failNext = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (failNext > 0) {
        failNext -= 1;
        res.writeHead(503).end();
        return;
      }
      received.push({ path: req.url ?? '', body, signature: String(req.headers['x-switchyard-signature'] ?? '') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await database?.destroy();
});

async function jobWithCallback(tenantId: string): Promise<string> {
  const jobId = randomUUID();
  const base = { jobId, tenantId, jobType: 'doc_review' };
  const root: NewTaskRow = { ...base, taskId: jobId, parentTaskId: null, agentId: 'supervisor', role: 'job', inputSummary: {}, totalSteps: 2 };
  const task: NewTaskRow = { ...base, taskId: randomUUID(), parentTaskId: jobId, agentId: 'extract-1', role: 'extract', inputSummary: {}, totalSteps: 2 };
  await new JobRepository(database.db).createJob(root, [task]);
  await new WebhookOutboxRepository(database.db).setCallback(tenantId, jobId, `${baseUrl}/hook/${jobId}`);
  return jobId;
}

function loop(handle: DatabaseHandle, send: SendWebhook, claimLeaseMs: number): WebhookDelivery {
  const tasks = new JobRepository(handle.db);
  return new WebhookDelivery({
    outbox: new WebhookOutboxRepository(handle.db),
    secret: SECRET,
    logger,
    send,
    claimLeaseMs,
    batch: 3,
    random: () => 0,
    presentJob: async (tenantId, jobId) => {
      const rows = await tasks.findJobTree(tenantId, jobId);
      return rows[0]?.parentTaskId === null ? presentJob(rows) : null;
    },
  });
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const undelivered = async () =>
  Number((await database.db.execute<{ n: number }>(sql`select count(*)::int as n from webhook_outbox where delivered_at is null`)).rows[0]!.n);

describe('webhook outbox (real Postgres)', () => {
  it('writes one outbox row when a job with a callback ends, whichever statement ends it', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const jobId = await jobWithCallback(tenant);
    await database.db.execute(sql`update agent_task_state set current_step = 1 where job_id = ${jobId} and parent_task_id is not null`);
    await database.db.execute(sql`update agent_task_state set status = 'running' where job_id = ${jobId}`);
    expect(await new WebhookOutboxRepository(database.db).deliveriesOf(jobId)).toHaveLength(0);
    await database.db.execute(sql`update agent_task_state set status = 'cancelled' where job_id = ${jobId}`);
    await database.db.execute(sql`update agent_task_state set status = 'cancelled', error = 'again' where job_id = ${jobId}`);
    const rows = await new WebhookOutboxRepository(database.db).deliveriesOf(jobId);
    expect(rows.map((r) => r.status)).toEqual(['cancelled']);
    await database.db.execute(sql`update webhook_outbox set delivered_at = now() where job_id = ${jobId}`);
  });

  it('delivers every callback at least once, signed, across a loop that dies mid-way and a new one', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const jobs = [];
    for (let i = 0; i < 5; i += 1) jobs.push(await jobWithCallback(tenant));
    for (const jobId of jobs) await database.db.execute(sql`update agent_task_state set status = 'success' where job_id = ${jobId}`);
    failNext = 1; // the receiver is briefly down: one attempt fails and is retried

    const firstPool = connectDatabase(database.url, { max: 2 });
    const http = webhookSender(['127.0.0.1'], 5_000);
    let posts = 0;
    const dying: SendWebhook = async (url, body, headers) => {
      const result = await http(url, body, headers);
      posts += 1;
      // The process is killed after this POST reached the receiver, before the outcome is recorded.
      if (posts === 2) throw new Error('killed');
      return result;
    };
    await expect(loop(firstPool, dying, 300).deliverDue()).rejects.toThrow('killed');
    await firstPool.close();

    const secondPool = connectDatabase(database.url, { max: 2 });
    const restarted = loop(secondPool, http, 300);
    await waitFor(async () => {
      await restarted.deliverDue();
      return (await undelivered()) === 0;
    });
    await secondPool.close();

    for (const jobId of jobs) {
      const deliveries = received.filter((r) => r.path === `/hook/${jobId}`);
      expect(deliveries.length).toBeGreaterThanOrEqual(1);
      for (const delivery of deliveries) {
        expect(verifyWebhook(SECRET, delivery.signature, delivery.body, Math.floor(Date.now() / 1000))).toEqual({ ok: true, timestamp: expect.any(Number) });
        expect(JSON.parse(delivery.body)).toMatchObject({ job_id: jobId, status: 'success' });
      }
    }
    const rows = (await Promise.all(jobs.map((id) => new WebhookOutboxRepository(database.db).deliveriesOf(id)))).flat();
    expect(rows.every((r) => r.deliveredAt !== null && r.lastHttpStatus === 204)).toBe(true);
    expect(rows.some((r) => r.attempts >= 2)).toBe(true);
  });

  it('a job retried by request sends a second signed webhook when it ends again: one per terminal transition', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const jobId = await jobWithCallback(tenant);
    const leases = new TaskLeaseRepository(database.db);
    const [task] = (await new JobRepository(database.db).findJobTree(tenant, jobId)).filter((row) => row.parentTaskId !== null);
    const claim = async () => {
      const claimed = await leases.claimTask(task!.taskId, `worker-${randomUUID().slice(0, 6)}`);
      if (!claimed.claimed) throw new Error(`not claimed: ${claimed.reason}`);
      return claimed.lease;
    };
    const deliverAll = async () => {
      const delivery = loop(database, webhookSender(['127.0.0.1'], 5_000), 300);
      await waitFor(async () => {
        await delivery.deliverDue();
        return (await undelivered()) === 0;
      });
    };

    expect(await leases.failTask(await claim(), 'upstream rejected the request', [])).toEqual({ jobFailed: true });
    await deliverAll();
    expect(await new JobRepository(database.db).retryJob(tenant, jobId)).toEqual({ retried: true, tasks: 1 });
    await database.db.execute(sql`update agent_task_state set status = 'pending' where job_id = ${jobId}`); // admitted
    const lease = await claim();
    await leases.checkpoint(lease, { step: 0, name: 'prepare', summary: {}, completed_at: new Date().toISOString() }, [], 0);
    const finished = await leases.completeTask(lease, { step: 1, name: 'extract', summary: {}, completed_at: new Date().toISOString() }, { conclusion: 'c', evidence: [], confidence: 1 }, [], 0);
    expect(finished.jobCompleted).toBe(true);
    await deliverAll();

    expect((await new WebhookOutboxRepository(database.db).deliveriesOf(jobId)).map((r) => r.status).sort()).toEqual(['failed', 'success']);
    const deliveries = received.filter((r) => r.path === `/hook/${jobId}`);
    expect(deliveries.map((d) => (JSON.parse(d.body) as { status: string }).status)).toEqual(['failed', 'success']);
    for (const delivery of deliveries) {
      expect(verifyWebhook(SECRET, delivery.signature, delivery.body, Math.floor(Date.now() / 1000))).toEqual({ ok: true, timestamp: expect.any(Number) });
    }
  });
});
