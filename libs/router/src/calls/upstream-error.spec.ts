import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { classifyStatus, classifyUpstreamError, UpstreamError } from './upstream-error';
import { estimateTokens } from './estimate-tokens';
import { costUsd } from './cost';
import type { TargetConfig } from '../config/router-config.schema';

const notTimedOut = { timedOut: false };

describe('classifyUpstreamError', () => {
  it.each([
    [429, 'rate_limited'],
    [401, 'auth'],
    [403, 'auth'],
    [500, 'server'],
    [503, 'server'],
    [400, 'bad_request'],
    [404, 'bad_request'],
    [422, 'bad_request'],
    [408, 'timeout'],
  ] as const)('maps HTTP %i to %s', (status, errorClass) => {
    expect(classifyStatus(status)).toBe(errorClass);
    expect(classifyUpstreamError(APIError.generate(status, undefined, 'x', new Headers()), notTimedOut)).toEqual({ errorClass, status });
  });

  it('classifies transport failures', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(classifyUpstreamError(new APIConnectionError({ cause: refused }), notTimedOut).errorClass).toBe('network');
    expect(classifyUpstreamError(new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) }), notTimedOut).errorClass).toBe(
      'network',
    );
    expect(classifyUpstreamError(new APIConnectionTimeoutError(), notTimedOut).errorClass).toBe('timeout');
    expect(classifyUpstreamError(new APIUserAbortError(), { timedOut: true }).errorClass).toBe('timeout');
    expect(classifyUpstreamError(new Error('weird'), notTimedOut).errorClass).toBe('unknown');
  });

  it('marks only bad requests as not worth retrying elsewhere', () => {
    expect(new UpstreamError('t', 'bad_request', 'x', 400).retryable).toBe(false);
    expect(new UpstreamError('t', 'server', 'x', 500).retryable).toBe(true);
    expect(new UpstreamError('t', 'auth', 'x', 401).message).toBe('t: auth (401): x');
  });
});

describe('estimateTokens and costUsd', () => {
  it('counts tokens with a real tokenizer, plus a per-message overhead', () => {
    // "hello world" is 2 tokens in o200k_base; each message adds 4 for its framing.
    expect(estimateTokens([{ content: 'hello world' }])).toBe(6);
    expect(estimateTokens([{ content: 'hello world' }, { content: 'hello world' }])).toBe(12);
    expect(estimateTokens([])).toBe(0);
    // CJK text is not four characters per token.
    expect(estimateTokens([{ content: '这是一个测试文档，用于估计令牌数量。' }])).toBeGreaterThan(8);
  });

  it('prices input and output per 1000 tokens', () => {
    const target = { cost_per_1k_tokens: { input: 0.002, output: 0.008 } } as TargetConfig;
    expect(costUsd(target, { inputTokens: 1500, outputTokens: 500 })).toBeCloseTo(0.007, 12);
  });
});
