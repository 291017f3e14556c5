/**
 * Gateway features that keep working when models change or fail, with the real supervisor and
 * llm-sim: a conversation (`metadata.session_id`) keeps its history across a forced switch of
 * model; read-only mode serves a cached answer and refuses an uncached one with 503
 * `read_only`, then lets calls through again; a request without task_type gets it inferred.
 */
import { TestStack } from '../support/stack';

jest.setTimeout(120_000);

const KEY = 'acme-gateway-context-key-01';
const ADMIN_TOKEN = 'admin-token-for-gateway-context-e2e';
const AUTH = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

interface Reply {
  status: number;
  headers: Headers;
  json: { choices?: { message: { content: string } }[]; error?: { code: string; type: string; message: string } };
}

describe('gateway conversation context, read-only mode, inferred meta (real supervisor + llm-sim)', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({
      apiKeys: `acme:${KEY}`,
      workers: 0,
      env: { ADMIN_TOKEN },
      // Answers for business_type `qa` at temperature 0 are cached: what read-only mode can still serve.
      editRouterConfig: (yaml) => yaml.replace('response_cache:\n  enabled: false', 'response_cache:\n  enabled: true'),
    });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  const complete = async (body: Record<string, unknown>): Promise<Reply> => {
    const res = await fetch(`${stack.baseUrl}/v1/chat/completions`, { method: 'POST', headers: AUTH, body: JSON.stringify({ model: 'auto', ...body }) });
    return { status: res.status, headers: res.headers, json: (await res.json()) as Reply['json'] };
  };
  const admin = async <T>(method: string, path: string, body?: unknown) => {
    const result = await stack.request<T>(method, path, body, ADMIN);
    expect(result.status).toBe(200);
    return result.json;
  };
  const callsWith = async (marker: string) => (await stack.simCalls()).filter((call) => call.last_user_message_preview.includes(marker));

  it('keeps a conversation across a forced switch of model: the second model receives the earlier turns', async () => {
    const metadata = { session_id: 'conversation-e2e-1', task_type: 'chat', complexity: 'low' };
    const first = await complete({ metadata, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'conv-1: my name is Wei and I live in Hangzhou' }] });
    expect(first.status).toBe(200);
    const firstTarget = first.headers.get('x-switchyard-target')!;
    expect(firstTarget).toBe('local_vllm_7b');

    // The first model goes away between turns; the client sends only its new turn.
    await admin('POST', `/admin/targets/${firstTarget}/drain`);
    try {
      const second = await complete({ metadata, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'conv-2: where do I live?' }] });
      expect(second.status).toBe(200);
      const secondTarget = second.headers.get('x-switchyard-target')!;
      expect(secondTarget).not.toBe(firstTarget);

      const [received] = await callsWith('conv-2');
      expect(received).toMatchObject({ target: secondTarget, message_roles: ['system', 'user', 'assistant', 'user'] });
      expect(received!.first_user_message_preview).toContain('conv-1: my name is Wei');
      const switched = await stack.supervisor.waitForLine(/conversation switched model/);
      expect(JSON.parse(switched)).toMatchObject({ from_target: firstTarget, to_target: secondTarget, history_messages: 2 });
      expect(JSON.parse(switched).history_tokens).toBeGreaterThan(0);

      // A client that sends the whole thread itself is not given the history a second time.
      const thread = [
        { role: 'user', content: 'conv-1: my name is Wei and I live in Hangzhou' },
        { role: 'assistant', content: first.json.choices![0]!.message.content },
        { role: 'user', content: 'conv-3: and my name?' },
      ];
      expect((await complete({ metadata, messages: thread })).status).toBe(200);
      expect((await callsWith('conv-3'))[0]!.message_roles).toEqual(['user', 'assistant', 'user']);
    } finally {
      await admin('POST', `/admin/targets/${firstTarget}/enable`);
    }
  });

  it('read-only mode serves a cached answer, refuses an uncached one with 503 read_only, and ends on the operator\'s word', async () => {
    const cacheable = { temperature: 0, metadata: { business_type: 'qa' } };
    const cachedQuestion = { ...cacheable, messages: [{ role: 'user', content: 'ro-cached: what are the payment terms?' }] };
    expect((await complete(cachedQuestion)).headers.get('x-switchyard-source')).toBe('upstream');

    expect(await admin('POST', '/admin/read-only', { enabled: true })).toMatchObject({ read_only: true });
    try {
      expect(await admin<{ read_only: boolean }>('GET', '/admin/targets')).toMatchObject({ read_only: true });
      const ready = await stack.request<{ status: string; read_only: boolean }>('GET', '/readyz');
      expect(ready).toMatchObject({ status: 200, json: { status: 'ready', read_only: true } });
      expect(await (await fetch(`${stack.baseUrl}/metrics`)).text()).toMatch(/^switchyard_router_read_only 1$/mu);

      const cached = await complete(cachedQuestion);
      expect(cached.status).toBe(200);
      expect(cached.headers.get('x-switchyard-source')).toBe('cache');

      const uncached = await complete({ ...cacheable, messages: [{ role: 'user', content: 'ro-uncached: what is the notice period?' }] });
      expect(uncached.status).toBe(503);
      expect(uncached.json.error).toMatchObject({ code: 'read_only', type: 'server_error' });
      expect(uncached.headers.get('retry-after')).toBe('30');
      expect(await callsWith('ro-uncached')).toEqual([]);
      expect(await callsWith('ro-cached')).toHaveLength(1);
    } finally {
      await admin('POST', '/admin/read-only', { enabled: false });
    }
    expect((await complete({ ...cacheable, messages: [{ role: 'user', content: 'ro-uncached: what is the notice period?' }] })).status).toBe(200);
    expect(await callsWith('ro-uncached')).toHaveLength(1);
  });

  it('infers task_type for a request that leaves it out, and explain shows it with its score', async () => {
    const messages = [{ role: 'user', content: 'infer-1: write a Python function that merges two sorted lists' }];
    const reply = await complete({ messages });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-switchyard-inferred')).toMatch(/^task_type=code\(0\.\d{3}\);complexity=(low|medium|high)\(/);

    const explained = await admin<{ inferred: { task_type: { value: string; score: number; source: string; applied: boolean } } }>('POST', '/admin/routing/explain', { meta: {}, messages });
    expect(explained.inferred.task_type).toMatchObject({ value: 'code', source: 'examples', applied: true });
    expect(explained.inferred.task_type.score).toBeGreaterThan(0);
    // What the caller declares is never second-guessed.
    expect((await complete({ messages, metadata: { task_type: 'chat', complexity: 'low' } })).headers.get('x-switchyard-inferred')).toBeNull();
  });
});
