/**
 * Request paths while Redis is away: a submission is accepted at once from Postgres (the
 * queue catches up when Redis returns) and a gateway call with an Idempotency-Key answers
 * within a bound instead of waiting for the whole outage. A private redis-server is killed;
 * the shared one is never touched.
 */
import { PrivateRedis } from '../support/private-services';
import { FAST_LIVENESS, documents, waitForJobs } from '../support/recovery-helpers';
import { TestStack } from '../support/stack';

jest.setTimeout(120_000);

/** Longer than the supervisor's Redis request deadline (2 s), far shorter than an outage. */
const CLIENT_PATIENCE_MS = 10_000;

describe('requests while Redis is down', () => {
  let redis: PrivateRedis;
  let stack: TestStack;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    stack = await TestStack.start({ workers: 1, redisUrl: redis.url, env: FAST_LIVENESS });
  });

  afterAll(async () => {
    await stack?.stop();
    await redis?.stop();
  });

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${stack.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      // The client gives up like a real one would; a request still hanging then fails the test.
      signal: AbortSignal.timeout(CLIENT_PATIENCE_MS),
    });
    return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> & { error?: { code: string } } };
  };

  it('accepts a job from Postgres at once (202), answers a keyed gateway call with 503 + Retry-After, and the job finishes once Redis is back', async () => {
    await redis.kill();
    let submitted: Awaited<ReturnType<typeof post>>;
    let keyed: Awaited<ReturnType<typeof post>>;
    try {
      submitted = await post('/v1/jobs', { type: 'doc_review', input: { question: 'When is payment due?', documents: documents('outage', 2) } });
      keyed = await post('/v1/chat/completions', { messages: [{ role: 'user', content: 'idem-outage: hello' }] }, { 'idempotency-key': 'outage-key-1' });
    } finally {
      await redis.startServer();
    }
    expect(submitted.status).toBe(202);
    const jobId = submitted.json.job_id as string;

    expect(keyed.status).toBe(503);
    expect(keyed.json.error?.code).toBe('idempotency_unavailable');
    expect(Number(keyed.headers.get('retry-after'))).toBeGreaterThan(0);

    const statuses = await waitForJobs(stack, [jobId], 60_000);
    expect(statuses.get(jobId)?.status).toBe('success');
    // The queue never saw the submission: the sweeper's reconcile enqueued its tasks from Postgres.
    expect(stack.supervisor.output.some((line) => line.includes('pending task had no runnable queue job') && line.includes(jobId))).toBe(true);
  });
});
