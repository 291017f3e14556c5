/**
 * The gateway under load and failure, with the real supervisor and the sim: calls wait in
 * line for a model slot instead of failing at once; an Idempotency-Key whose supervisor died
 * mid-call is free again after its lease; a client that hangs up on a plain call cancels it
 * upstream.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { freePort, waitFor } from '@switchyard/devkit';
import { SIM_TARGETS, TestStack } from '../support/stack';

jest.setTimeout(120_000);

const KEY = 'acme-gateway-resilience-key-01';
const AUTH = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

interface Reply {
  status: number;
  retryAfter: string | null;
  code: string | undefined;
}

describe('gateway resilience (real supervisor + llm-sim)', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ apiKeys: `acme:${KEY}`, workers: 0 });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  const callsWith = async (marker: string) => (await stack.simCalls()).filter((c) => c.last_user_message_preview.includes(marker));

  const complete = async (baseUrl: string, content: string, options: { metadata?: Record<string, string>; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Reply> => {
    const res = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...AUTH, ...options.headers },
      body: JSON.stringify({ model: 'auto', messages: [{ role: 'user', content }], ...(options.metadata ? { metadata: options.metadata } : {}) }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const json = (await res.json()) as { error?: { code: string } };
    return { status: res.status, retryAfter: res.headers.get('retry-after'), code: json.error?.code };
  };

  /** Another supervisor on this stack with the router config changed by `edit`; probes off so only the calls below reach the sim. */
  const supervisorWith = async (name: string, edit: (router: Record<string, unknown> & { targets: Record<string, unknown>[] }) => void) => {
    const config = parse(readFileSync(stack.sharedEnv.ROUTER_CONFIG!, 'utf8')) as { router: Record<string, unknown> & { targets: Record<string, unknown>[] } };
    config.router.probes = { enabled: false };
    edit(config.router);
    const file = `${stack.sharedEnv.ROUTER_CONFIG!}.${name}.yaml`;
    writeFileSync(file, stringify(config));
    const port = await freePort();
    const process = await stack.startSupervisor({ PORT: String(port), ROUTER_CONFIG: file });
    return { process, baseUrl: `http://127.0.0.1:${port}` };
  };

  const slowEverywhere = (delayMs: number) => Promise.all(SIM_TARGETS.map((target) => stack.setSimMode(target.name, { mode: 'slow', delay_ms: delayMs })));
  const okEverywhere = () => Promise.all(SIM_TARGETS.map((target) => stack.setSimMode(target.name, { mode: 'ok' })));

  describe('request queue (every target at max_concurrency)', () => {
    const SLOTS_PER_TARGET = 2;
    const CALLS = 24;
    const limitConcurrency = (router: Record<string, unknown> & { targets: Record<string, unknown>[] }) => {
      for (const target of router.targets) target.max_concurrency = SLOTS_PER_TARGET;
      // 1 s to the first token would mark the local targets overloaded (they would shed work): here only their slots limit them.
      router.overload = { first_token_ms: 5_000, queue: 8 };
    };

    afterEach(okEverywhere);

    it('lets calls beyond the summed max_concurrency wait for a slot: every one is answered', async () => {
      const { baseUrl } = await supervisorWith('queue', limitConcurrency);
      await slowEverywhere(1_000);
      const replies = await Promise.all(Array.from({ length: CALLS }, (_, i) => complete(baseUrl, `queued-${i}: hello`)));
      expect(replies.filter((r) => r.status !== 200)).toEqual([]);
      // Each call went upstream once: waiting in line costs no failed attempts.
      expect(await callsWith('queued-')).toHaveLength(CALLS);
    });

    it('past the queue capacity, the excess gets 503 overloaded with Retry-After', async () => {
      const { baseUrl } = await supervisorWith('tiny-queue', (router) => {
        limitConcurrency(router);
        router.gateway = { queue_capacity: 2, queue_timeout_ms: 10_000 };
      });
      await slowEverywhere(1_000);
      const replies = await Promise.all(Array.from({ length: CALLS }, (_, i) => complete(baseUrl, `overflow-${i}: hello`)));
      const refused = replies.filter((r) => r.status !== 200);
      expect(refused.length).toBeGreaterThan(0);
      for (const reply of refused) {
        expect(reply).toEqual({ status: 503, code: 'overloaded', retryAfter: expect.stringMatching(/^\d+$/) as unknown });
      }
      expect(replies.filter((r) => r.status === 200).length).toBeGreaterThan(0);
    });
  });

  it('an Idempotency-Key held by a supervisor killed mid-call is free again once its lease lapses', async () => {
    const doomed = await supervisorWith('doomed', () => undefined);
    const metadata = { task_type: 'extract', complexity: 'low', timeout_ms: '5000' };
    const headers = { 'idempotency-key': 'crash-key-1' };
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 5_000 });
    try {
      const orphaned = complete(doomed.baseUrl, 'crash-1: extract the parties.', { metadata, headers }).catch(() => undefined);
      await waitFor('the call to reach the sim', async () => ((await callsWith('crash-1')).length > 0 ? true : undefined), 10_000, 50);
      doomed.process.kill('SIGKILL');
      await doomed.process.waitForExit();
      await orphaned;
      await stack.setSimMode('local_vllm_7b', { mode: 'ok' });

      const first = await complete(stack.baseUrl, 'crash-1: extract the parties.', { metadata, headers });
      expect(first).toMatchObject({ status: 409, code: 'idempotency_key_in_progress' });
      const retried = await waitFor(
        'a retry with the same key to be answered',
        async () => {
          const reply = await complete(stack.baseUrl, 'crash-1: extract the parties.', { metadata, headers });
          return reply.status === 409 ? undefined : reply;
        },
        20_000,
        250,
      );
      expect(retried.status).toBe(200);
    } finally {
      await stack.setSimMode('local_vllm_7b', { mode: 'ok' });
    }
  });

  it('a client that hangs up on a plain (non-streaming) call cancels the upstream call', async () => {
    // Timeouts longer than the sim's delay, so nothing but the hang-up can end the upstream call early.
    const patient = await supervisorWith('patient', (router) => {
      router.timeouts = { local_ms: 60_000, cloud_ms: 60_000, connect_ms: 30_000, first_token_local_ms: 30_000, first_token_cloud_ms: 30_000 };
    });
    // The answer would come after 10 s: the hang-up must reach the sim well before.
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 10_000 });
    try {
      const abort = new AbortController();
      const call = complete(patient.baseUrl, 'plain-hangup-1: extract the parties.', { metadata: { task_type: 'extract', complexity: 'low' }, signal: abort.signal }).catch(
        (error: unknown) => error,
      );
      await waitFor('the call to reach the sim', async () => ((await callsWith('plain-hangup-1')).length > 0 ? true : undefined), 10_000, 50);
      abort.abort();
      await call;
      const upstream = await waitFor(
        'the sim to see the gateway hang up',
        async () => {
          const [seen] = await callsWith('plain-hangup-1');
          return seen?.client_gone ? seen : undefined;
        },
        5_000,
        50,
      );
      expect(upstream.target).toBe('local_vllm_7b');
    } finally {
      await stack.setSimMode('local_vllm_7b', { mode: 'ok' });
    }
  });
});
