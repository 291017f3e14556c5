import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { parse, stringify } from 'yaml';
import { TestStack } from '../support/stack';

/** Per-tenant gateway limits (SPEC §6 tenants.yaml) against the real supervisor and llm-sim. */
const LIMITED = 'limited-key-0001';
const BROKE = 'broke-key-0001';

jest.setTimeout(120_000);

describe('tenant gateway_rpm and daily_budget_usd on the gateway (real supervisor + llm-sim)', () => {
  let stack: TestStack | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    await stack?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('past gateway_rpm a tenant gets 429 with Retry-After; a tenant past its daily budget is served locally and told so, plain and streaming', async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-tenants-'));
    const tenantsFile = join(dir, 'tenants.yaml');
    writeFileSync(
      tenantsFile,
      stringify({
        defaults: { max_running_jobs: 2, daily_budget_usd: null, gateway_rpm: null },
        global: { max_running_jobs: 64 },
        tenants: { limited: { gateway_rpm: 2 }, broke: { daily_budget_usd: 0 } },
      }),
    );
    stack = await TestStack.start({
      apiKeys: `limited:${LIMITED},broke:${BROKE}`,
      workers: 0,
      env: { TENANTS_CONFIG: tenantsFile },
      editRouterConfig: (yaml) => {
        const doc = parse(yaml) as { router: Record<string, unknown> };
        doc.router.models = { deep: { task_type: 'reasoning', complexity: 'high' } };
        doc.router.probes = { enabled: false };
        return stringify(doc);
      },
    });
    const limited = new OpenAI({ baseURL: `${stack.baseUrl}/v1`, apiKey: LIMITED, maxRetries: 0 });
    const ask = (client: OpenAI, content: string, model = 'auto') => client.chat.completions.create({ model, messages: [{ role: 'user', content }] }).withResponse();

    // Two pass within one minute; the third is refused — unless the minute turned between them, so retry once in a fresh minute.
    let refused: unknown;
    for (let round = 0; round < 2 && refused === undefined; round += 1) {
      await ask(limited, `rpm-${round}-1`);
      await ask(limited, `rpm-${round}-2`);
      refused = await ask(limited, `rpm-${round}-3`).then(
        () => undefined,
        (e: unknown) => e,
      );
    }
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(refused).toMatchObject({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    const retryAfter = Number((refused as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    const broke = new OpenAI({ baseURL: `${stack.baseUrl}/v1`, apiKey: BROKE, maxRetries: 0 });
    const degraded = await ask(broke, 'budget-1: think hard', 'deep');
    expect(degraded.response.headers.get('x-switchyard-target')).not.toBe('cloud_main');
    expect(degraded.response.headers.get('x-switchyard-degraded')).toBe('daily_budget_spent');
    // Streaming too: the header is there before the first byte.
    const streamed = await broke.chat.completions.create({ model: 'deep', messages: [{ role: 'user', content: 'budget-2: think hard' }], stream: true }).withResponse();
    expect(streamed.response.headers.get('x-switchyard-degraded')).toBe('daily_budget_spent');
    for await (const piece of streamed.data) expect(piece.object).toBe('chat.completion.chunk');
    const calls = (await stack.simCalls()).filter((call) => /budget-[12]/.test(call.last_user_message_preview));
    expect(calls).toHaveLength(2);
    expect(calls.map((call) => call.target)).not.toContain('cloud_main');
  });
});
