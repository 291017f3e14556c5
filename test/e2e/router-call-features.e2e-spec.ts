import { parse, stringify } from 'yaml';
import { freePort } from '../support/processes';
import { SIM_TARGETS, TestStack } from '../support/stack';

/**
 * Hedged requests, coalescing and "is it me or them" against the real supervisor (gateway)
 * and llm-sim. Probes are off, so the sim's call log holds only the gateway's own calls.
 */
jest.setTimeout(180_000);

const ADMIN_TOKEN = 'admin-token-for-call-features-e2e';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

interface TargetsView {
  targets: { name: string; breaker: string; score: number; share: number }[];
  network: { state: string; alerts: number };
  banner: string | null;
}

/** The shipped router.yaml with probes off and `change` applied to its `router` block. */
const tuned = (change: (router: Record<string, unknown>) => void) => (yaml: string) => {
  const doc = parse(yaml) as { router: Record<string, unknown> };
  doc.router.probes = { enabled: false };
  change(doc.router);
  return stringify(doc);
};

const completion = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'auto',
  messages: [{ role: 'user', content }],
  metadata: { task_type: 'extract', complexity: 'low' },
  ...extra,
});

describe('router call features (real supervisor + llm-sim)', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('hedge_after_ms: a slow primary is hedged; the second target answers well before the primary would, and the sim sees the primary cancelled', async () => {
    stack = await TestStack.start({
      workers: 0,
      editRouterConfig: tuned((router) => {
        const routes = router.routes as Record<string, unknown>[];
        const fallback = routes.find((route) => route.name === 'fallback')!;
        delete fallback.target;
        Object.assign(fallback, { targets: ['local_vllm_7b', 'local_vllm_32b'], hedge_after_ms: 300 });
      }),
    });
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 8_000 });

    const started = performance.now();
    const plain = await stack.request<{ choices: { message: { content: string } }[] }>('POST', '/v1/chat/completions', completion('hedge-plain: who signed?'));
    const plainMs = performance.now() - started;
    expect(plain.status).toBe(200);
    expect(plain.headers.get('x-switchyard-target')).toBe('local_vllm_32b');
    // The primary alone would take 8 s.
    expect(plainMs).toBeLessThan(6_000);

    const streamed = await fetch(`${stack.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(completion('hedge-stream: who signed?', { stream: true })),
    });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('x-switchyard-target')).toBe('local_vllm_32b');
    expect(await streamed.text()).toContain('[DONE]');

    const s = stack;
    const calls = await waitForCalls(s, (all) => all.filter((c) => c.target === 'local_vllm_7b' && c.client_gone).length >= 2);
    for (const marker of ['hedge-plain', 'hedge-stream']) {
      const mine = calls.filter((c) => c.last_user_message_preview.startsWith(marker));
      expect(mine.map((c) => [c.target, c.client_gone])).toEqual([
        ['local_vllm_7b', true],
        ['local_vllm_32b', false],
      ]);
    }
  });

  it('coalescing: 20 identical concurrent requests cause one upstream call, and every caller gets the answer', async () => {
    stack = await TestStack.start({ workers: 0, editRouterConfig: tuned((router) => Object.assign(router, { coalescing: { enabled: true } })) });
    // Slow enough that all 20 are in flight together.
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 1_500 });
    const body = completion('coalesce-1: list the parties', { temperature: 0 });
    const s = stack;
    const answers = await Promise.all(Array.from({ length: 20 }, () => s.request<{ choices: { message: { content: string } }[] }>('POST', '/v1/chat/completions', body)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.json.choices[0]!.message.content)).size).toBe(1);
    const calls = (await stack.simCalls()).filter((c) => c.last_user_message_preview.startsWith('coalesce-1'));
    expect(calls).toHaveLength(1);
    const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/switchyard_router_coalesced_calls_total\{role="follower"\} 19\b/);
    expect(metrics).toMatch(/switchyard_router_coalesced_calls_total\{role="leader"\} 1\b/);
  });

  it('every target’s port closed at once, and the known-good endpoint down too: one alert, no breaker opened; back without a ramp', async () => {
    const knownGoodPort = await freePort();
    stack = await TestStack.start({
      workers: 0,
      env: { ADMIN_TOKEN },
      editRouterConfig: tuned((router) =>
        Object.assign(router, {
          network_check: { known_good_url: `http://127.0.0.1:${knownGoodPort}/healthz`, window_ms: 10_000, timeout_ms: 500, recheck_ms: 60_000 },
          breaker: { consecutive_failures: 3 },
          backoff: { base_ms: 10, max_ms: 20, jitter_ms: 5 },
        }),
      ),
    });
    for (const target of SIM_TARGETS) await stack.setSimMode(target.name, { mode: 'down' });
    const s = stack;
    const failed = await Promise.all(Array.from({ length: 8 }, (_, i) => s.request('POST', '/v1/chat/completions', completion(`outage-${i}: hello`))));
    expect(failed.every((r) => r.status >= 500)).toBe(true);
    await stack.supervisor.waitForLine(/local_network_fault/, 10_000);
    const during = await stack.request<TargetsView>('GET', '/admin/targets', undefined, ADMIN);
    expect(during.json.network).toMatchObject({ state: 'local_fault', alerts: 1 });
    expect(during.json.banner).toMatch(/fault is on our side/);
    expect(during.json.targets.map((t) => [t.name, t.breaker])).toEqual(SIM_TARGETS.map((t) => [t.name, 'closed']));
    expect(stack.supervisor.count(/"breaker":"open"/)).toBe(0);
    expect(stack.supervisor.count(/local_network_fault/)).toBe(1);

    // The network is back: the first call answers from the usual target, at full share.
    for (const target of SIM_TARGETS) await stack.setSimMode(target.name, { mode: 'ok' });
    const back = await stack.request('POST', '/v1/chat/completions', completion('outage-back: hello'));
    expect(back.status).toBe(200);
    expect(back.headers.get('x-switchyard-target')).toBe('local_vllm_7b');
    const after = await stack.request<TargetsView>('GET', '/admin/targets', undefined, ADMIN);
    expect(after.json.network.state).toBe('ok');
    expect(after.json.banner).toBeNull();
    expect(after.json.targets.every((t) => t.breaker === 'closed' && t.share === 100)).toBe(true);
  });
});

async function waitForCalls(stack: TestStack, done: (calls: Awaited<ReturnType<TestStack['simCalls']>>) => boolean) {
  for (let i = 0; i < 100; i += 1) {
    const calls = await stack.simCalls();
    if (done(calls)) return calls;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return stack.simCalls();
}
