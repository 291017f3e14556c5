import { waitFor } from '@switchyard/devkit';
import { TestStack } from '../support/stack';

const ACME = { authorization: 'Bearer acme-key-0001' };
const GLOBEX = { authorization: 'Bearer globex-key-0002' };

interface ErrorJson {
  error: { code: string; message: string; issues?: { path: string; message: string }[] };
}

const validJob = (question = 'What changed?') => ({
  type: 'doc_review',
  input: { question, documents: [{ id: 'd1', text: 'Release 2 adds audit logs.' }] },
});

describe('jobs REST API (real supervisor process with API keys)', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ apiKeys: 'acme:acme-key-0001,globex:globex-key-0002', workers: 1 });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  describe('authentication and tenant isolation', () => {
    it('answers 401 without a key or with an unknown key', async () => {
      const none = await stack.request<ErrorJson>('POST', '/v1/jobs', validJob());
      expect(none.status).toBe(401);
      expect(none.json.error.code).toBe('unauthorized');
      const wrong = await stack.request<ErrorJson>('GET', '/v1/jobs', undefined, { authorization: 'Bearer nope-nope-nope' });
      expect(wrong.status).toBe(401);
    });

    it("hides another tenant's job behind a 404, in reads, lists and cancels", async () => {
      const created = await stack.request<{ job_id: string }>('POST', '/v1/jobs', validJob(), ACME);
      expect(created.status).toBe(202);
      const id = created.json.job_id;
      expect((await stack.request('GET', `/v1/jobs/${id}`, undefined, ACME)).status).toBe(200);
      expect((await stack.request('GET', `/v1/jobs/${id}`, undefined, GLOBEX)).status).toBe(404);
      expect((await stack.request('POST', `/v1/jobs/${id}/cancel`, undefined, GLOBEX)).status).toBe(404);
      const globexList = await stack.request<{ jobs: { job_id: string }[] }>('GET', '/v1/jobs', undefined, GLOBEX);
      expect(globexList.json.jobs.map((j) => j.job_id)).not.toContain(id);
      await stack.waitForJob(id, ACME);
    });
  });

  describe('bad input: a 400 that names the field, and nothing written', () => {
    const cases: [string, unknown, string][] = [
      ['malformed JSON', '{"type": "doc_review", "input": ', '(body)'],
      ['a missing field', { type: 'doc_review', input: { documents: [{ id: 'a', text: 'x' }] } }, 'input.question'],
      ['a wrongly typed field', { type: 'doc_review', input: { question: 'q', documents: 'not-a-list' } }, 'input.documents'],
      ['an unknown job type', { type: 'translate', input: {} }, 'type'],
      [
        'more than 50 documents',
        { type: 'doc_review', input: { question: 'q', documents: Array.from({ length: 51 }, (_, i) => ({ id: `d${i}`, text: 't' })) } },
        'input.documents',
      ],
      ['a bad sensitivity value', { ...validJob(), meta: { sensitivity: 'secret' } }, 'meta.sensitivity'],
      ['an unknown field', { ...validJob(), priority: 'high' }, '(root)'],
    ];

    it.each(cases)('%s', async (_name, body, path) => {
      const before = await stack.countRows();
      const res = await stack.request<ErrorJson>('POST', '/v1/jobs', body, ACME);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      expect(res.json.error.code).toBe('invalid_request');
      expect(res.json.error.issues?.map((i) => i.path)).toContain(path);
      expect(res.json.error.message.length).toBeGreaterThan(0);
      expect(await stack.countRows()).toBe(before);
    });

    it('rejects a job id that is not a UUID with 400 and an unknown one with 404', async () => {
      const bad = await stack.request<ErrorJson>('GET', '/v1/jobs/not-a-uuid', undefined, ACME);
      expect(bad.status).toBe(400);
      expect(bad.json.error.issues?.[0]?.path).toBe('id');
      const missing = await stack.request<ErrorJson>('GET', '/v1/jobs/00000000-0000-4000-8000-000000000000', undefined, ACME);
      expect(missing.status).toBe(404);
    });

    it('rejects bad list parameters', async () => {
      const res = await stack.request<ErrorJson>('GET', '/v1/jobs?status=done&limit=0', undefined, ACME);
      expect(res.status).toBe(400);
      expect(res.json.error.issues?.map((i) => i.path).sort()).toEqual(['query.limit', 'query.status']);
      const cursor = await stack.request<ErrorJson>('GET', '/v1/jobs?cursor=garbage', undefined, ACME);
      expect(cursor.status).toBe(400);
    });
  });

  describe('Idempotency-Key', () => {
    it('returns the same job for the same key and body, and 409 for another body', async () => {
      const headers = { ...ACME, 'idempotency-key': 'order-7781' };
      const first = await stack.request<{ job_id: string }>('POST', '/v1/jobs', validJob('Q1'), headers);
      const again = await stack.request<{ job_id: string }>('POST', '/v1/jobs', validJob('Q1'), headers);
      expect(first.status).toBe(202);
      expect(again.status).toBe(202);
      expect(again.json.job_id).toBe(first.json.job_id);

      const before = await stack.countRows();
      const conflict = await stack.request<ErrorJson>('POST', '/v1/jobs', validJob('Q2'), headers);
      expect(conflict.status).toBe(409);
      expect(conflict.json.error.code).toBe('idempotency_conflict');
      expect(await stack.countRows()).toBe(before);

      // The same key under another tenant is another job.
      const other = await stack.request<{ job_id: string }>('POST', '/v1/jobs', validJob('Q1'), { ...GLOBEX, 'idempotency-key': 'order-7781' });
      expect(other.status).toBe(202);
      expect(other.json.job_id).not.toBe(first.json.job_id);
      await stack.waitForJob(first.json.job_id, ACME);
      await stack.waitForJob(other.json.job_id, GLOBEX);
    });
  });

  describe('listing and cancelling', () => {
    it('pages through jobs newest first with a cursor and filters by status', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        const res = await stack.request<{ job_id: string }>('POST', '/v1/jobs', validJob(`page ${i}`), GLOBEX);
        ids.push(res.json.job_id);
      }
      for (const id of ids) await stack.waitForJob(id, GLOBEX);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2';
        const page: { json: { jobs: { job_id: string }[]; next_cursor: string | null } } = await stack.request('GET', `/v1/jobs${query}`, undefined, GLOBEX);
        expect(page.json.jobs.length).toBeLessThanOrEqual(2);
        seen.push(...page.json.jobs.map((j) => j.job_id));
        cursor = page.json.next_cursor;
      } while (cursor);
      expect(new Set(seen).size).toBe(seen.length);
      const newestFirst = [...ids].reverse();
      expect(seen.filter((id) => ids.includes(id))).toEqual(newestFirst);

      const successes = await stack.request<{ jobs: { status: string }[] }>('GET', '/v1/jobs?status=success&limit=100', undefined, GLOBEX);
      expect(successes.json.jobs.length).toBeGreaterThanOrEqual(5);
      expect(successes.json.jobs.every((j) => j.status === 'success')).toBe(true);
    });

    it('cancels a running job, stopping its model calls in flight, and refuses to cancel a finished one', async () => {
      await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 10_000 });
      try {
        const created = await stack.request<{ job_id: string }>('POST', '/v1/jobs', validJob('slow one'), ACME);
        // Cancel while an extract call is waiting on the (slow) model.
        const inFlight = async () => (await stack.simCalls()).filter((c) => c.target === 'local_vllm_7b' && c.last_user_message_preview.includes('slow one'));
        await waitFor('an extract call in flight', async () => ((await inFlight()).length > 0 ? true : undefined), 20_000);
        const cancelled = await stack.request<{ job_id: string; status: string }>('POST', `/v1/jobs/${created.json.job_id}/cancel`, undefined, ACME);
        expect(cancelled.status).toBe(200);
        expect(cancelled.json.status).toBe('cancelled');
        const job = await stack.waitForJob<{ status: string; tasks: { status: string }[] }>(created.json.job_id, ACME);
        expect(job.status).toBe('cancelled');
        expect(job.tasks.every((t) => t.status === 'cancelled')).toBe(true);
        const again = await stack.request<ErrorJson>('POST', `/v1/jobs/${created.json.job_id}/cancel`, undefined, ACME);
        expect(again.status).toBe(409);
        // The worker saw its lease end and hung up on the model: nothing keeps generating (or billing).
        await waitFor('the in-flight model calls to be hung up', async () => ((await inFlight()).every((c) => c.client_gone) ? true : undefined), 15_000);
      } finally {
        await stack.setSimMode('local_vllm_7b', { mode: 'ok' });
      }
    });
  });

  it('serves liveness and readiness', async () => {
    expect((await stack.request('GET', '/healthz')).status).toBe(200);
    const ready = await stack.request<{ status: string }>('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.json.status).toBe('ready');
  });
});
