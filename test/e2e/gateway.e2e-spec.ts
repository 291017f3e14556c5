import { readFileSync, writeFileSync } from 'node:fs';
import OpenAI from 'openai';
import { parse, stringify } from 'yaml';
import { freePort, startTunnellingProxy, waitFor } from '@switchyard/devkit';
import { TestStack } from '../support/stack';

const KEY = 'acme-gateway-key-0001';
const ADMIN_TOKEN = 'admin-token-for-gateway-e2e';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

interface ErrorJson {
  error: { code: string; message: string; issues?: { path: string; message: string }[] };
}

/** The gateway driven by the official `openai` SDK against the real supervisor and the sim. */
jest.setTimeout(120_000);

describe('POST /v1/chat/completions (openai SDK client, real supervisor + llm-sim)', () => {
  let stack: TestStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await TestStack.start({ apiKeys: `acme:${KEY}`, workers: 0, env: { ADMIN_TOKEN } });
    client = new OpenAI({ baseURL: `${stack.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  const callsWith = async (marker: string) => (await stack.simCalls()).filter((c) => c.last_user_message_preview.includes(marker));

  it('answers a plain completion, routed by metadata, with the target in x-switchyard-target', async () => {
    const { data, response } = await client.chat.completions
      .create({
        model: 'auto',
        messages: [{ role: 'user', content: 'plain-1: extract the parties from this contract.' }],
        metadata: { task_type: 'extract', complexity: 'low' },
      })
      .withResponse();
    expect(response.headers.get('x-switchyard-target')).toBe('local_vllm_7b');
    expect(data.object).toBe('chat.completion');
    expect(data.choices[0]!.message.content).toEqual(expect.any(String));
    expect(data.choices[0]!.message.content!.length).toBeGreaterThan(0);
    expect(data.usage!.total_tokens).toBeGreaterThan(0);
    expect((await callsWith('plain-1')).map((c) => c.target)).toEqual(['local_vllm_7b']);
  });

  it('keeps sensitive reasoning on the local 32B and sends other reasoning to the cloud', async () => {
    const sensitive = await client.chat.completions
      .create({ model: 'auto', messages: [{ role: 'user', content: 'sens-1: reason about this' }], metadata: { task_type: 'reasoning', complexity: 'high', sensitivity: 'sensitive' } })
      .withResponse();
    expect(sensitive.response.headers.get('x-switchyard-target')).toBe('local_vllm_32b');
    const open = await client.chat.completions
      .create({ model: 'auto', messages: [{ role: 'user', content: 'open-1: reason about this' }], metadata: { task_type: 'reasoning', complexity: 'high' } })
      .withResponse();
    expect(open.response.headers.get('x-switchyard-target')).toBe('cloud_main');
  });

  it('streams with stream: true, usage included', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({
        model: 'auto',
        messages: [{ role: 'user', content: 'stream-1: summarise the meeting notes.' }],
        stream: true,
        stream_options: { include_usage: true },
        metadata: { task_type: 'summarize', complexity: 'low' },
      })
      .withResponse();
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(response.headers.get('x-switchyard-target')).toBe('local_vllm_7b');
    let content = '';
    let chunks = 0;
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      chunks += 1;
      content += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(chunks).toBeGreaterThan(2);
    expect(content.length).toBeGreaterThan(0);
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('rejects bad input with a 400 naming the field, and a missing key with a 401', async () => {
    const bad = await stack.request<ErrorJson>('POST', '/v1/chat/completions', { messages: [] }, { authorization: `Bearer ${KEY}` });
    expect(bad.status).toBe(400);
    expect(bad.json.error.issues?.[0]?.path).toBe('messages');
    const badMeta = await stack.request<ErrorJson>(
      'POST',
      '/v1/chat/completions',
      { messages: [{ role: 'user', content: 'x' }], metadata: { sensitivity: 'secret' } },
      { authorization: `Bearer ${KEY}` },
    );
    expect(badMeta.status).toBe(400);
    expect(badMeta.json.error.issues?.[0]?.path).toBe('metadata.sensitivity');
    await expect(client.chat.completions.create({ model: 'auto', messages: [] })).rejects.toMatchObject({ status: 400 });
    const anonymous = new OpenAI({ baseURL: `${stack.baseUrl}/v1`, apiKey: 'not-a-key-at-all', maxRetries: 0 });
    await expect(anonymous.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 401 });
  });

  it('answers a retried Idempotency-Key from the stored answer without paying again; another body is a 409', async () => {
    const body = { model: 'auto', messages: [{ role: 'user' as const, content: 'idem-1: classify this ticket' }], metadata: { task_type: 'classify' } };
    const options = { headers: { 'Idempotency-Key': 'retry-me-1' } };
    const first = await client.chat.completions.create(body, options).withResponse();
    const second = await client.chat.completions.create(body, options).withResponse();
    expect(second.data.choices[0]!.message.content).toBe(first.data.choices[0]!.message.content);
    expect(second.response.headers.get('x-switchyard-source')).toBe('idempotent');
    expect(await callsWith('idem-1')).toHaveLength(1);
    await expect(
      client.chat.completions.create({ ...body, messages: [{ role: 'user', content: 'idem-1: something else' }] }, options),
    ).rejects.toMatchObject({ status: 409 });
  });

  it('admin: lists targets, explains a decision, and a drained local pair makes sensitive work 503 (busy), never cloud', async () => {
    const targets = await stack.request<{ targets: { name: string; breaker: string; score: number }[] }>('GET', '/admin/targets', undefined, ADMIN);
    expect(targets.status).toBe(200);
    expect(targets.json.targets.map((t) => t.name)).toEqual(['local_vllm_7b', 'local_vllm_32b', 'cloud_main']);
    expect((await stack.request('GET', '/admin/targets')).status).toBe(401);

    const explain = await stack.request<{ chosen: string; rule: string; candidates: { target: string; score?: number }[] }>(
      'POST',
      '/admin/routing/explain',
      { task_type: 'reasoning', complexity: 'high', sensitivity: 'sensitive' },
      ADMIN,
    );
    expect(explain.json).toMatchObject({ chosen: 'local_vllm_32b', rule: 'sensitive_data' });

    expect((await stack.request('POST', '/admin/targets/local_vllm_7b/drain', undefined, ADMIN)).status).toBe(200);
    expect((await stack.request('POST', '/admin/targets/local_vllm_32b/drain', undefined, ADMIN)).status).toBe(200);
    expect((await stack.request('POST', '/admin/targets/nope/drain', undefined, ADMIN)).status).toBe(404);
    // Even the operator's forced primary does not move sensitive work to the cloud.
    expect((await stack.request('POST', '/admin/routing/force-primary', { target: 'cloud_main' }, ADMIN)).status).toBe(200);
    try {
      const busy = await stack.request<ErrorJson>(
        'POST',
        '/v1/chat/completions',
        { messages: [{ role: 'user', content: 'busy-1: private data' }], metadata: { sensitivity: 'sensitive' } },
        { authorization: `Bearer ${KEY}` },
      );
      expect(busy.status).toBe(503);
      expect(busy.json.error.code).toBe('no_eligible_target');
      expect(busy.json.error.message).toMatch(/busy/);
      expect(await callsWith('busy-1')).toHaveLength(0);
      // Not sensitive: the forced primary serves it.
      const open = await client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'forced-1: hello' }] }).withResponse();
      expect(open.response.headers.get('x-switchyard-target')).toBe('cloud_main');
    } finally {
      await stack.request('POST', '/admin/routing/force-primary', { target: null }, ADMIN);
      await stack.request('POST', '/admin/targets/local_vllm_7b/enable', undefined, ADMIN);
      await stack.request('POST', '/admin/targets/local_vllm_32b/enable', undefined, ADMIN);
    }
  });

  it('a client that hangs up mid-stream cancels the upstream generation (nothing keeps running, or billing, upstream)', async () => {
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 1000 });
    try {
      const abort = new AbortController();
      const stream = await client.chat.completions.create(
        { model: 'auto', stream: true, messages: [{ role: 'user', content: 'hangup-1: extract the parties.' }], metadata: { task_type: 'extract', complexity: 'low' } },
        { signal: abort.signal },
      );
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content) abort.abort();
      }
      const upstream = await waitFor('the sim to see the gateway hang up', async () => {
        const [call] = await callsWith('hangup-1');
        return call?.client_gone ? call : undefined;
      });
      expect(upstream.target).toBe('local_vllm_7b');
    } finally {
      await stack.setSimMode('local_vllm_7b', { mode: 'ok' });
    }
  });

  it('egress proxy: with HTTP_PROXY set, cloud calls are tunnelled through it, local calls never are, and its credentials stay out of the logs', async () => {
    const proxy = await startTunnellingProxy('egress:hunter2-secret');
    const port = await freePort();
    // Its own copy of the config with probes off, so the only upstream traffic is the calls below.
    const config = parse(readFileSync(stack.sharedEnv.ROUTER_CONFIG!, 'utf8')) as { router: Record<string, unknown> };
    config.router.probes = { enabled: false };
    const configFile = `${stack.sharedEnv.ROUTER_CONFIG!}.proxy.yaml`;
    writeFileSync(configFile, stringify(config));
    const proxied = await stack.startSupervisor({ PORT: String(port), HTTP_PROXY: proxy.url, ROUTER_CONFIG: configFile });
    try {
      const viaProxy = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: KEY, maxRetries: 0 });
      const ask = (content: string, metadata: Record<string, string>) =>
        viaProxy.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content }], metadata }).withResponse();

      const local = await ask('proxy-local: extract the parties.', { task_type: 'extract', complexity: 'low' });
      expect(local.response.headers.get('x-switchyard-target')).toBe('local_vllm_7b');
      expect(proxy.connects).toEqual([]);

      const cloud = await ask('proxy-cloud: weigh these clauses against each other.', { task_type: 'reasoning', complexity: 'high' });
      expect(cloud.response.headers.get('x-switchyard-target')).toBe('cloud_main');
      expect(cloud.data.choices[0]!.message.content).toContain('proxy-cloud');
      expect(await callsWith('proxy-cloud')).toHaveLength(1);
      expect(proxy.connects).toEqual([
        { target: expect.stringMatching(/^127\.0\.0\.1:\d+$/) as unknown as string, auth: `Basic ${Buffer.from('egress:hunter2-secret').toString('base64')}` },
      ]);
      const logs = proxied.output.join('\n');
      expect(logs).toMatch(/calls to cloud targets go through an egress proxy/);
      expect(logs).not.toContain('hunter2');
    } finally {
      await proxied.stop();
      await proxy.close();
    }
  });

  it('hot reload: a valid config change turns the response cache on; an invalid file is rejected and the old config stays', async () => {
    const file = stack.sharedEnv.ROUTER_CONFIG!;
    const original = readFileSync(file, 'utf8');
    const doc = parse(original) as { router: Record<string, unknown>; response_cache?: unknown };
    doc.response_cache = { enabled: true, ttl_s: { qa: 300 } };
    writeFileSync(file, stringify(doc));
    await stack.supervisor.waitForLine(/router config reloaded/);

    const ask = (content: string, temperature: number) =>
      client.chat.completions
        .create({ model: 'auto', temperature, messages: [{ role: 'user', content }], metadata: { business_type: 'qa', task_type: 'chat' } })
        .withResponse();
    const first = await ask('cache-1: what is the refund window?', 0);
    const second = await ask('cache-1: what is the refund window?', 0);
    expect(first.response.headers.get('x-switchyard-source')).toBe('upstream');
    expect(second.response.headers.get('x-switchyard-source')).toBe('cache');
    expect(second.data.choices[0]!.message.content).toBe(first.data.choices[0]!.message.content);
    expect(await callsWith('cache-1')).toHaveLength(1);
    // Non-deterministic work is never cached.
    await ask('cache-2: write me a poem', 0.7);
    await ask('cache-2: write me a poem', 0.7);
    expect(await callsWith('cache-2')).toHaveLength(2);

    writeFileSync(file, original.replace('default_policy: local_first', 'default_policy: cheapest_first'));
    const rejected = await stack.supervisor.waitForLine(/rejected, the previous config stays in force/);
    expect(rejected).toContain(file);
    expect(rejected).toContain('default_policy');
    const third = await ask('cache-1: what is the refund window?', 0);
    expect(third.response.headers.get('x-switchyard-source')).toBe('cache');
  });
});
