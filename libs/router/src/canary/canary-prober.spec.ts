import { createLogger } from '@switchyard/observability';
import { parseRouterConfig } from '../config/router-config.loader';
import type { TargetConfig } from '../config/router-config.schema';
import { CanaryProber } from './canary-prober';
import type { CanaryCaseResult } from './canary-verdict';

const config = parseRouterConfig(
  `
router:
  targets:
    - {name: zh_only, type: local, endpoint: "http://127.0.0.1:1/v1", model: a, max_concurrency: 1, context_window: 1000, cost_per_1k_tokens: {input: 0, output: 0}, languages: [zh]}
    - {name: any, type: local, endpoint: "http://127.0.0.1:2/v1/", model: b, max_concurrency: 1, context_window: 1000, cost_per_1k_tokens: {input: 0, output: 0}}
  routes:
    - {name: all, when: {all_else: true}, target: any}
  canaries:
    cases:
      - {name: zh_case, language: zh, prompt: 订单号是多少？DD-1, expect: {contains: DD-1}}
      - {name: en_case, language: en, prompt: "order? ORD-1", expect: {contains: ORD-1}}
`,
  'canary-prober.spec',
);

describe('CanaryProber', () => {
  it('asks each target the cases in its languages at temperature 0, judges the replies, and reports calls that got no answer', async () => {
    const requests: { url: string; body: { model: string; temperature: number; messages: { content: string }[] }; headers: Record<string, string> }[] = [];
    const fetchFor = (target: TargetConfig): typeof fetch =>
      (async (url: string, init: RequestInit) => {
        const body = JSON.parse(init.body as string) as (typeof requests)[number]['body'];
        requests.push({ url, body, headers: init.headers as Record<string, string> });
        if (body.messages[0]!.content.includes('ORD')) return new Response('{"error": {}}', { status: 503 });
        // zh_only echoes the code; `any` answers it wrongly.
        const content = target.name === 'zh_only' ? '{"conclusion": "DD-1"}' : '{"conclusion": "DD-6"}';
        return new Response(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }), { status: 200 });
      }) as typeof fetch;
    const rounds = new Map<string, readonly CanaryCaseResult[]>();
    const prober = new CanaryProber(
      { config, recordCanaryRound: (target, results) => rounds.set(target, results) },
      { secrets: () => undefined, logger: createLogger('canary-prober-spec', 'silent'), fetchFor },
    );
    await prober.runRound();

    expect(rounds.get('zh_only')).toEqual([{ case: 'zh_case', language: 'zh', passed: true, expected: 'contains "DD-1"', excerpt: '{"conclusion": "DD-1"}' }]);
    expect(rounds.get('any')).toEqual([
      { case: 'zh_case', language: 'zh', passed: false, expected: 'contains "DD-1"', excerpt: '{"conclusion": "DD-6"}' },
      { case: 'en_case', language: 'en', error: 'HTTP 503' },
    ]);
    expect(requests.map((r) => r.url).sort()).toEqual(['http://127.0.0.1:1/v1/chat/completions', 'http://127.0.0.1:2/v1/chat/completions', 'http://127.0.0.1:2/v1/chat/completions']);
    expect(requests.every((r) => r.body.temperature === 0 && r.headers['x-switchyard-probe'] === 'canary')).toBe(true);
  });
});
