import { estimateInputTokens, estimateTokens } from './estimate-tokens';

const english = 'The warranty period is twelve months from delivery; claims need an invoice and a serial number. ';
const chinese = '保修期自交货之日起十二个月，索赔需要发票和序列号。';
const mixed = `${english}${chinese} 👍🏽 const x = { "a": [1, 2, 3] }; \u0000\t\n`;
const roomy = { tightestContextTokens: 1_000_000, tokenQuota: false };

describe('estimateInputTokens', () => {
  it.each([
    ['English', english.repeat(40)],
    ['Chinese', chinese.repeat(40)],
    ['mixed scripts, emoji and code', mixed.repeat(20)],
    ['one character repeated', 'a'.repeat(5_000)],
    ['empty', ''],
  ])('bounds the exact o200k count from above by the UTF-8 bytes (%s)', (_, text) => {
    const messages = [{ content: 'You are an extraction agent.' }, { content: text }];
    const bytes = messages.reduce((sum, m) => sum + Buffer.byteLength(m.content), 0);
    expect(bytes + 4 * messages.length).toBeGreaterThanOrEqual(estimateTokens(messages));
  });

  it('approximates (bytes ÷ 4) without tokenizing when the bound fits the tightest context limit and no quota counts tokens', () => {
    const messages = [{ content: english.repeat(20) }];
    const bytes = Buffer.byteLength(messages[0]!.content);
    expect(estimateInputTokens(messages, roomy)).toBe(Math.ceil(bytes / 4) + 4);
    // Near the exact count for prose, and never above the bound.
    expect(estimateInputTokens(messages, roomy) / estimateTokens(messages)).toBeGreaterThan(0.8);
    expect(estimateInputTokens(messages, roomy) / estimateTokens(messages)).toBeLessThan(1.5);
  });

  it('counts exactly when the bound passes the tightest context limit', () => {
    const messages = [{ content: english.repeat(20) }];
    const bytes = Buffer.byteLength(messages[0]!.content);
    expect(estimateInputTokens(messages, { tightestContextTokens: bytes + 3, tokenQuota: false })).toBe(estimateTokens(messages));
    expect(estimateInputTokens(messages, { tightestContextTokens: bytes + 4, tokenQuota: false })).toBe(Math.ceil(bytes / 4) + 4);
  });

  it('counts exactly when a target charges tokens to a tpm quota', () => {
    const messages = [{ content: english.repeat(20) }];
    expect(estimateInputTokens(messages, { ...roomy, tokenQuota: true })).toBe(estimateTokens(messages));
  });

  it('approximates a short input too, without loading the tokenizer', () => {
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a fresh copy of the module, tokenizer not yet loaded
      const fresh = require('./estimate-tokens') as typeof import('./estimate-tokens');
      expect(fresh.estimateInputTokens([{ content: 'ping' }], roomy)).toBe(1 + 4);
      expect(fresh.estimateInputTokens([{ content: english.repeat(20) }], roomy)).toBe(Math.ceil(Buffer.byteLength(english.repeat(20)) / 4) + 4);
      expect(fresh.tokenizerLoaded()).toBe(false);
      // Loaded on the first exact count, which the tpm quota needs.
      expect(fresh.estimateInputTokens([{ content: 'ping' }], { ...roomy, tokenQuota: true })).toBe(fresh.estimateTokens([{ content: 'ping' }]));
      expect(fresh.tokenizerLoaded()).toBe(true);
    });
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a fresh copy of the module, tokenizer not yet loaded
      const fresh = require('./estimate-tokens') as typeof import('./estimate-tokens');
      fresh.preloadTokenizer();
      expect(fresh.tokenizerLoaded()).toBe(true);
    });
  });
});
