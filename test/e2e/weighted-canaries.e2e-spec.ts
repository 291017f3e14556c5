import { parse, stringify } from 'yaml';
import { waitFor } from '../support/processes';
import { TestStack } from '../support/stack';

/**
 * Weighted splits and business canaries against the real supervisor and llm-sim: a 90/10 split
 * seen through the gateway, and a target switched to answering wrong content losing its share
 * through the canaries (the shipped Chinese and English cases) while the other keeps serving.
 */
const ADMIN_TOKEN = 'admin-token-for-weighted-canaries-e2e';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

interface TargetView {
  name: string;
  state: string;
  share: number;
  weights: { rule: string; configured: number; current: number }[];
  canary: {
    failing: boolean;
    checkedAt: number | null;
    passed: number;
    failures: { case: string; language: string; expected: string; excerpt: string }[];
  } | null;
}

/** The shipped config with two test routes on the local targets, canaries every second, probes on. */
function withSplits(yaml: string): string {
  const doc = parse(yaml) as { router: Record<string, unknown> & { routes: unknown[] } };
  doc.router.routes.unshift(
    { name: 'split_90_10', when: { business_type: 'split_e2e' }, targets: [{ name: 'local_vllm_7b', weight: 90 }, { name: 'local_vllm_32b', weight: 10 }], priority: 200 },
    { name: 'split_canary', when: { business_type: 'canary_e2e' }, targets: [{ name: 'local_vllm_7b', weight: 50 }, { name: 'local_vllm_32b', weight: 50 }], priority: 200 },
  );
  doc.router.canaries = { ...(doc.router.canaries as object), interval_s: 1, timeout_ms: 5_000, rounds_to_fail: 2 };
  // A loaded test machine answers slowly: the overload spill is not what is tested here.
  doc.router.overload = { first_token_ms: 600_000, queue: 1_000 };
  doc.router.recovery = { steps: [10, 30, 60, 100], hold_ms: 60_000, switch_cooldown_ms: 90_000, max_step_points: 15 };
  return stringify(doc);
}

jest.setTimeout(180_000);

describe('weighted splits and business canaries (real supervisor + llm-sim)', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ workers: 0, env: { ADMIN_TOKEN }, editRouterConfig: withSplits });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const chat = async (businessType: string, content: string, user?: string) => {
    const res = await stack.request<{ choices: { message: { content: string } }[] }>('POST', '/v1/chat/completions', {
      model: 'auto',
      messages: [{ role: 'user', content }],
      metadata: { business_type: businessType },
      ...(user === undefined ? {} : { user }),
    });
    expect(res.status).toBe(200);
    return res.headers.get('x-switchyard-target')!;
  };
  /** `n` calls, at most 4 at a time (under the 32B's 8 slots: nothing spills to the cloud for want of a slot). */
  const calls = async (n: number, businessType: string, tag: string) => {
    const served: string[] = [];
    for (let i = 0; i < n; i += 4) served.push(...(await Promise.all([0, 1, 2, 3].map((j) => chat(businessType, `${tag} ${i + j}`)))));
    return served;
  };
  const targets = async () => (await stack.request<{ targets: TargetView[] }>('GET', '/admin/targets', undefined, ADMIN)).json.targets;
  const target = async (name: string) => (await targets()).find((t) => t.name === name)!;

  it('200 gateway calls on a 90/10 split: the 10 % target gets 10 % ± 5, each user stays on one target, explain shows the split', async () => {
    const served: string[] = [];
    // In batches of 8: the 7B's 16 slots are never all taken, so no call spills over for want of one.
    for (let batch = 0; batch < 25; batch += 1) {
      served.push(...(await Promise.all(Array.from({ length: 8 }, (_, i) => chat('split_e2e', `split call ${batch * 8 + i}`, `user-${batch * 8 + i}`)))));
    }
    const share = served.filter((name) => name === 'local_vllm_32b').length / served.length;
    expect(share).toBeGreaterThanOrEqual(0.05);
    expect(share).toBeLessThanOrEqual(0.15);
    expect(served.filter((name) => name === 'local_vllm_7b').length + served.filter((name) => name === 'local_vllm_32b').length).toBe(200);
    // Sticky: the same user, asked again, lands where it did.
    for (const i of [0, 1, 2, 3, 4]) expect(await chat('split_e2e', `again ${i}`, `user-${i}`)).toBe(served[i]);

    const explain = await stack.request<{ split: { rule: string; targets: { target: string; weight: number; share: number }[] } }>(
      'POST',
      '/admin/routing/explain',
      { business_type: 'split_e2e' },
      ADMIN,
    );
    expect(explain.json.split).toMatchObject({ rule: 'split_90_10', targets: [{ target: 'local_vllm_7b', weight: 90, share: 90 }, { target: 'local_vllm_32b', weight: 10, share: 10 }] });
    expect((await target('local_vllm_32b')).weights).toEqual(expect.arrayContaining([{ rule: 'split_90_10', configured: 10, current: 10, changedAt: null }]));
  });

  it('a target switched to wrong content fails its canaries and loses its share while the other keeps serving; it comes back through the ramp', async () => {
    // Every target passes the shipped cases (Chinese and English) while it answers right.
    await waitFor('a passing canary round on every target', async () => ((await targets()).every((t) => t.canary?.checkedAt !== null && t.canary?.passed === 6) ? true : undefined), 30_000);
    const before = await calls(40, 'canary_e2e', 'before');
    expect(new Set(before)).toEqual(new Set(['local_vllm_7b', 'local_vllm_32b']));

    await stack.setSimMode('local_vllm_7b', { mode: 'wrong' });
    const failing = await waitFor('the 7B to fail its canaries', async () => {
      const view = await target('local_vllm_7b');
      return view.canary?.failing ? view : undefined;
    }, 30_000);
    expect(failing.state).toBe('unavailable');
    expect(failing.canary!.failures.map((f) => f.case).sort()).toEqual(['en_hotline_regex', 'en_order_extract', 'en_overdue_invoice_schema', 'zh_hotline_regex', 'zh_order_extract', 'zh_ticket_department_schema']);
    const zhOrder = failing.canary!.failures.find((f) => f.case === 'zh_order_extract')!;
    expect(zhOrder).toMatchObject({ language: 'zh', expected: 'contains "DD20261130-4471"' });
    // What came back: the order number with its digits moved.
    expect(zhOrder.excerpt).toContain('DD75716685-9926');
    // The healthy target passes the same cases meanwhile.
    expect((await target('local_vllm_32b')).canary).toMatchObject({ failing: false, passed: 6 });

    const during = await calls(40, 'canary_e2e', 'during');
    expect(new Set(during)).toEqual(new Set(['local_vllm_32b']));
    const explain = await stack.request<{ split: { targets: { target: string; share: number; reason?: string }[] } }>('POST', '/admin/routing/explain', { business_type: 'canary_e2e' }, ADMIN);
    expect(explain.json.split.targets).toEqual([
      { target: 'local_vllm_7b', weight: 50, share: 0, eligible: false, reason: 'canary_failing' },
      { target: 'local_vllm_32b', weight: 50, share: 100, eligible: true },
    ]);

    // Right answers again: the first passing round ends it, and the target climbs the ramp from 10 %.
    await stack.setSimMode('local_vllm_7b', { mode: 'ok' });
    const recovered = await waitFor('the 7B to pass its canaries again', async () => {
      const view = await target('local_vllm_7b');
      return view.canary?.failing === false ? view : undefined;
    }, 30_000);
    expect(recovered.share).toBe(10);
    expect(recovered.state).toBe('degraded');
  });
});
