import { RequestMetaSchema } from '@switchyard/contracts';
import type { ModelAttempt, ModelChatRequest, ModelChatResult, ModelRouter } from './model-router.port';
import { callForSummary, parseModelSummary, type SummaryCall } from './structured-summary';

const GOOD = { conclusion: 'Supplier A is cheapest.', evidence: ['A charges 10', 'B charges 12'], confidence: 0.8 };

describe('parseModelSummary', () => {
  it('reads plain JSON', () => {
    expect(parseModelSummary(JSON.stringify(GOOD))).toEqual(GOOD);
  });

  it('reads JSON inside a ```json fence', () => {
    expect(parseModelSummary(`Here you go:\n\`\`\`json\n${JSON.stringify(GOOD, null, 2)}\n\`\`\`\nThanks.`)).toEqual(GOOD);
  });

  it('reads JSON inside an unlabelled fence', () => {
    expect(parseModelSummary(`\`\`\`\n${JSON.stringify(GOOD)}\n\`\`\``)).toEqual(GOOD);
  });

  it('reads JSON with text around it', () => {
    expect(parseModelSummary(`Sure! The summary is ${JSON.stringify(GOOD)} -- hope that helps.`)).toEqual(GOOD);
  });

  it('accepts the confidence bounds 0 and 1', () => {
    expect(parseModelSummary(JSON.stringify({ ...GOOD, confidence: 0 }))?.confidence).toBe(0);
    expect(parseModelSummary(JSON.stringify({ ...GOOD, confidence: 1 }))?.confidence).toBe(1);
  });

  it.each([
    ['not JSON at all', 'I could not find anything relevant.'],
    ['broken JSON', '{"conclusion": "x", "evidence": [}'],
    ['an empty reply', ''],
    ['a JSON array', '[1, 2, 3]'],
    ['missing evidence', JSON.stringify({ conclusion: 'x', confidence: 0.5 })],
    ['empty conclusion', JSON.stringify({ ...GOOD, conclusion: '' })],
    ['evidence that is not strings', JSON.stringify({ ...GOOD, evidence: [1, 2] })],
    ['confidence above 1', JSON.stringify({ ...GOOD, confidence: 1.5 })],
    ['confidence below 0', JSON.stringify({ ...GOOD, confidence: -0.1 })],
    ['confidence as a string', JSON.stringify({ ...GOOD, confidence: '0.5' })],
    ['null confidence', JSON.stringify({ ...GOOD, confidence: null })],
  ])('returns null for %s', (_label, content) => {
    expect(parseModelSummary(content)).toBeNull();
  });
});

type Reply = { content: string; target: string; costUsd?: number } | Error;

/** A router at the port: answers from a script and records every request. */
class ScriptedRouter implements ModelRouter {
  readonly requests: ModelChatRequest[] = [];
  readonly badOutputReports: string[] = [];
  constructor(private readonly replies: Reply[]) {}

  reportBadOutput(target: string): void {
    this.badOutputReports.push(target);
  }

  async chat(request: ModelChatRequest): Promise<ModelChatResult> {
    this.requests.push(request);
    const reply = this.replies.shift();
    if (!reply) throw new Error('no scripted reply left');
    if (reply instanceof Error) throw reply;
    const attempts: ModelAttempt[] = [
      { target: reply.target, model: `${reply.target}-model`, rule: 'fallback', outcome: 'ok', latencyMs: 12.4 },
    ];
    return {
      content: reply.content,
      target: reply.target,
      model: `${reply.target}-model`,
      rule: 'fallback',
      usage: { inputTokens: 100, outputTokens: 20 },
      latencyMs: 12.4,
      costUsd: reply.costUsd ?? 0.001,
      attempts,
    };
  }
}

function call(overrides: Partial<SummaryCall> = {}): SummaryCall {
  return {
    meta: RequestMetaSchema.parse({ task_type: 'extract', complexity: 'low' }),
    messages: [{ role: 'user', content: 'Summarise.' }],
    step: 1,
    maxTokens: 256,
    headers: { 'x-switchyard-task': 'task-1' },
    context: { tenantId: 'acme', jobId: 'job-1', taskId: 'task-1', step: 1 },
    signal: new AbortController().signal,
    ...overrides,
  };
}

describe('callForSummary', () => {
  it('returns the parsed summary of a good reply after one call', async () => {
    const router = new ScriptedRouter([{ content: JSON.stringify(GOOD), target: 'local_7b', costUsd: 0.002 }]);
    const result = await callForSummary(router, call());

    expect(result.summary).toEqual(GOOD);
    expect(result.raw).toBe(JSON.stringify(GOOD));
    expect(result.costUsd).toBe(0.002);
    expect(result.routes).toEqual([
      { step: 1, target: 'local_7b', model: 'local_7b-model', rule: 'fallback', outcome: 'ok', latency_ms: 12 },
    ]);
    expect(router.requests).toHaveLength(1);
    expect(router.requests[0]).toMatchObject({
      jsonMode: true,
      temperature: 0,
      maxTokens: 256,
      headers: { 'x-switchyard-task': 'task-1', 'x-switchyard-attempt': '1' },
    });
    expect(router.requests[0]!.excludeTargets).toBeUndefined();
  });

  it('retries a garbage reply once on another target and marks the first route bad_output', async () => {
    const router = new ScriptedRouter([
      { content: 'garbage', target: 'local_7b', costUsd: 0.001 },
      { content: JSON.stringify(GOOD), target: 'cloud_main', costUsd: 0.01 },
    ]);
    const result = await callForSummary(router, call());

    expect(router.requests).toHaveLength(2);
    expect(router.requests[1]!.excludeTargets).toEqual(['local_7b']);
    expect(router.requests[1]!.headers).toMatchObject({ 'x-switchyard-attempt': '2', 'x-switchyard-task': 'task-1' });
    expect(result.summary).toEqual(GOOD);
    expect(result.raw).toBe(JSON.stringify(GOOD));
    expect(result.costUsd).toBeCloseTo(0.011, 10);
    expect(result.routes.map((r) => [r.target, r.outcome])).toEqual([
      ['local_7b', 'bad_output'],
      ['cloud_main', 'ok'],
    ]);
  });

  it('keeps the raw text of the retry as the conclusion with null confidence when both replies are garbage', async () => {
    const router = new ScriptedRouter([
      { content: 'first garbage', target: 'local_7b' },
      { content: 'second garbage', target: 'cloud_main' },
    ]);
    const result = await callForSummary(router, call());

    expect(result.summary).toEqual({ conclusion: 'second garbage', evidence: [], confidence: null });
    expect(result.raw).toBe('second garbage');
    expect(result.routes.map((r) => r.outcome)).toEqual(['bad_output', 'bad_output']);
    expect(router.requests).toHaveLength(2);
  });

  it('keeps the first raw text when the retry finds no other target', async () => {
    const router = new ScriptedRouter([{ content: 'only garbage', target: 'local_7b', costUsd: 0.003 }, new Error('no eligible target')]);
    const result = await callForSummary(router, call());

    expect(result.summary).toEqual({ conclusion: 'only garbage', evidence: [], confidence: null });
    expect(result.raw).toBe('only garbage');
    expect(result.costUsd).toBe(0.003);
    expect(result.routes).toEqual([expect.objectContaining({ target: 'local_7b', outcome: 'bad_output' })]);
    expect(router.requests[1]!.excludeTargets).toEqual(['local_7b']);
  });

  it('propagates the retry error when the call was aborted', async () => {
    const controller = new AbortController();
    const aborted = new Error('aborted');
    const router: ModelRouter = {
      chat: jest.fn(async (request: ModelChatRequest) => {
        if (request.excludeTargets) {
          controller.abort();
          throw aborted;
        }
        return new ScriptedRouter([{ content: 'garbage', target: 'local_7b' }]).chat(request);
      }),
    };
    await expect(callForSummary(router, call({ signal: controller.signal }))).rejects.toBe(aborted);
  });

  it('propagates an error of the first call', async () => {
    const failure = Object.assign(new Error('upstream down'), { retryable: true });
    const router = new ScriptedRouter([failure]);
    await expect(callForSummary(router, call())).rejects.toBe(failure);
    expect(router.requests).toHaveLength(1);
  });

  it('omits maxTokens when the call sets none', async () => {
    const router = new ScriptedRouter([{ content: JSON.stringify(GOOD), target: 'local_7b' }]);
    const { maxTokens: _omit, ...withoutMax } = call();
    await callForSummary(router, withoutMax);
    expect(router.requests[0]).not.toHaveProperty('maxTokens');
  });
});

describe('callForSummary: bad output reported to the router', () => {
  const meta = RequestMetaSchema.parse({ task_type: 'extract', complexity: 'low' });
  const base = { meta, messages: [{ role: 'user' as const, content: 'Summarise.' }], step: 1, headers: {}, context: { tenantId: 't', jobId: 'j', taskId: 'k', step: 1 }, signal: new AbortController().signal };

  it('reports a JSON reply of the wrong shape, which only the agent can judge', async () => {
    const router = new ScriptedRouter([
      { content: JSON.stringify({ answer: 'no summary fields' }), target: 'local_vllm_7b' },
      { content: JSON.stringify(GOOD), target: 'local_vllm_32b' },
    ]);
    await callForSummary(router, base);
    expect(router.badOutputReports).toEqual(['local_vllm_7b']);
  });

  it('leaves non-JSON replies to the router, which counts them itself', async () => {
    const router = new ScriptedRouter([
      { content: 'Sure! Here is what I found.', target: 'local_vllm_7b' },
      { content: JSON.stringify(GOOD), target: 'local_vllm_32b' },
    ]);
    await callForSummary(router, base);
    expect(router.badOutputReports).toEqual([]);
  });
});
