import { createLogger } from '@switchyard/observability';
import { parseRouterConfig } from '../config/router-config.loader';
import { TargetProber } from './target-prober';

const config = parseRouterConfig(
  `
router:
  targets:
    - {name: a, type: local, endpoint: "http://127.0.0.1:1/v1", model: a, max_concurrency: 2, context_window: 1000, cost_per_1k_tokens: {input: 0, output: 0}}
  routes:
    - {name: all, when: {all_else: true}, target: a}
`,
  'prober.spec',
);

function prober(responses: (() => Promise<Response>)[]) {
  const recorded: unknown[] = [];
  const urls: string[] = [];
  const fetchFn = ((url: string) => {
    urls.push(url);
    return responses.shift()!();
  }) as unknown as typeof fetch;
  const sink = { config, recordProbe: (target: string, result: unknown) => recorded.push([target, result]) };
  const p = new TargetProber(sink, { livenessIntervalMs: 10_000, inferenceIntervalMs: 30_000, timeoutMs: 1000, secrets: () => undefined, logger: createLogger('prober', 'silent'), fetchFor: () => fetchFn });
  return { p, recorded, urls };
}
const refused = () => Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) }));

describe('TargetProber', () => {
  it('treats a refused connection before the target was ever up as a cold start, afterwards as a failure', async () => {
    const { p, recorded, urls } = prober([refused, () => Promise.resolve(new Response('{}')), refused]);
    await p.probeAll('liveness');
    await p.probeAll('liveness');
    await p.probeAll('liveness');
    expect(urls[0]).toBe('http://127.0.0.1:1/v1/models');
    expect(recorded).toEqual([
      ['a', expect.objectContaining({ ok: false, coldStart: true })],
      ['a', expect.objectContaining({ ok: true })],
      ['a', expect.objectContaining({ ok: false, coldStart: false, failure: 'network' })],
    ]);
  });

  it('treats 503 "loading" as a cold start and a 500 on the 1-token inference as a server failure', async () => {
    const { p, recorded, urls } = prober([
      () => Promise.resolve(new Response('{"error":"model is loading"}', { status: 503 })),
      () => Promise.resolve(new Response('{}', { status: 500 })),
    ]);
    await p.probeAll('inference');
    await p.probeAll('inference');
    expect(urls[0]).toBe('http://127.0.0.1:1/v1/chat/completions');
    expect(recorded).toEqual([
      ['a', expect.objectContaining({ coldStart: true })],
      ['a', expect.objectContaining({ coldStart: false, failure: 'server' })],
    ]);
  });

  it('probes liveness every interval until stopped', async () => {
    jest.useFakeTimers();
    try {
      const ok = () => Promise.resolve(new Response('{}'));
      const { p, urls } = prober([ok, ok, ok, ok]);
      p.start();
      await jest.advanceTimersByTimeAsync(20_000);
      expect(urls).toEqual(['http://127.0.0.1:1/v1/models', 'http://127.0.0.1:1/v1/models']);
      p.stop();
      await jest.advanceTimersByTimeAsync(60_000);
      expect(urls).toHaveLength(2);
    } finally {
      jest.useRealTimers();
    }
  });
});
