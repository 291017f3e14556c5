import { join } from 'node:path';
import { loadRouterConfig } from '../config/router-config.loader';
import type { CanaryCase } from '../config/router-config.schema';
import { casesFor } from './canary-prober';
import { CanaryStatus } from './canary-status';
import { judgeCanary, type CanaryCaseResult } from './canary-verdict';

const shipped = loadRouterConfig(join(__dirname, '../../../../config/router.yaml')).config;
const shippedCase = (name: string): CanaryCase => shipped.canaries!.cases.find((c) => c.name === name)!;

const testCase = (expect: CanaryCase['expect'], language = 'en'): CanaryCase => ({ name: 'c', language, prompt: 'p', expect });

describe('canary verdicts', () => {
  it('contains: every text must appear, case and line breaks aside', () => {
    const check = testCase({ contains: ['ORD-58213', 'total 1,240.50'] });
    expect(judgeCanary(check, 'The order is ord-58213,\n  total   1,240.50 EUR.')).toMatchObject({ passed: true });
    expect(judgeCanary(check, 'The order is ORD-58213, total 1,240.00 EUR.')).toMatchObject({ passed: false, expected: 'contains "total 1,240.50"' });
  });

  it('regex: the reply must match', () => {
    const check = testCase({ regex: '^\\{.*"status":\\s*"ok"' });
    expect(judgeCanary(check, '{"status": "ok"}').passed).toBe(true);
    expect(judgeCanary(check, 'status ok')).toMatchObject({ passed: false, expected: 'matches /^\\{.*"status":\\s*"ok"/u' });
  });

  it('json_schema: the reply must be JSON the schema accepts (a ```json fence allowed)', () => {
    const check = testCase({ json_schema: { type: 'object', required: ['label'], properties: { label: { enum: ['refund', 'delivery'] } } } });
    expect(judgeCanary(check, '```json\n{"label": "refund"}\n```').passed).toBe(true);
    expect(judgeCanary(check, '{"label": "weather"}')).toMatchObject({ passed: false, expected: "JSON that the case's json_schema accepts" });
    expect(judgeCanary(check, 'Sure! The label is refund.').passed).toBe(false);
  });

  it('reports what came back as a short excerpt', () => {
    const verdict = judgeCanary(testCase({ contains: ['x'] }), `${'long answer '.repeat(40)}\n\nend`);
    expect(verdict.excerpt.length).toBeLessThanOrEqual(160);
    expect(verdict.excerpt.endsWith('…')).toBe(true);
  });

  describe('the shipped cases, per language', () => {
    it('ships cases in Chinese and English, each of the three kinds', () => {
      const cases = shipped.canaries!.cases;
      for (const language of ['zh', 'en']) {
        const kinds = cases.filter((c) => c.language === language).flatMap((c) => Object.keys(c.expect));
        expect(new Set(kinds)).toEqual(new Set(['contains', 'regex', 'json_schema']));
      }
    });

    it.each([
      ['en_order_extract', '{"conclusion": "ORD-58213, 1,240.50 EUR", "evidence": ["the total came to 1,240.50 EUR"], "confidence": 0.95}', '{"conclusion": "ORD-58213, 1,420.50 EUR", "evidence": [], "confidence": 0.9}'],
      ['en_hotline_regex', '{"conclusion": "400-820-3350", "evidence": [], "confidence": 1}', '{"conclusion": "400-820-3530", "evidence": [], "confidence": 1}'],
      ['en_overdue_invoice_schema', '{"conclusion": "INV-7731", "evidence": ["Invoice INV-7731 is 45 days overdue."], "confidence": 0.9}', '{"conclusion": "INV-7713", "evidence": [], "confidence": 0.9}'],
      ['zh_order_extract', '{"conclusion": "DD20261130-4471，368 元", "evidence": ["实付金额 368 元"], "confidence": 0.9}', '{"conclusion": "DD20261130-4471，386 元", "evidence": [], "confidence": 0.9}'],
      ['zh_hotline_regex', '{"conclusion": "95588-1234", "evidence": [], "confidence": 1}', '{"conclusion": "95558-1234", "evidence": [], "confidence": 1}'],
      ['zh_ticket_department_schema', '{"conclusion": "GD-3307：财务部", "evidence": ["需要财务部重新开具"], "confidence": 0.9}', '{"conclusion": "GD-3307：技术部", "evidence": [], "confidence": 0.9}'],
    ])('%s passes a right answer and fails a plausible wrong one', (name, right, wrong) => {
      expect(judgeCanary(shippedCase(name), right).passed).toBe(true);
      expect(judgeCanary(shippedCase(name), wrong).passed).toBe(false);
    });

    it('asks each target only the cases in the languages it serves', () => {
      const target = { ...shipped.targets[0]!, languages: ['zh'] };
      expect(casesFor(target, shipped.canaries!.cases).map((c) => c.language)).toEqual(['zh', 'zh', 'zh']);
      expect(casesFor({ ...target, languages: undefined }, shipped.canaries!.cases)).toHaveLength(6);
    });
  });
});

describe('canary status', () => {
  const pass: CanaryCaseResult = { case: 'a', language: 'en', passed: true, expected: 'contains "x"', excerpt: 'x' };
  const fail: CanaryCaseResult = { case: 'b', language: 'zh', passed: false, expected: 'contains "y"', excerpt: 'z' };
  const noAnswer: CanaryCaseResult = { case: 'b', language: 'zh', error: 'HTTP 503' };

  it('fails after rounds_to_fail failing rounds in a row and recovers on the first passing round', () => {
    const status = new CanaryStatus();
    expect(status.recordRound(1, [pass, fail], 2)).toBeNull();
    expect(status.recordRound(2, [pass], 2)).toBeNull();
    expect(status.recordRound(3, [pass, fail], 2)).toBeNull();
    expect(status.recordRound(4, [pass, fail], 2)).toBe('failing');
    expect(status.failing).toBe(true);
    expect(status.snapshot()).toMatchObject({ failing: true, failingRounds: 2, checkedAt: 4, passed: 1, failures: [{ case: 'b', language: 'zh', expected: 'contains "y"', excerpt: 'z' }] });
    expect(status.recordRound(5, [pass, fail], 2)).toBeNull();
    expect(status.recordRound(6, [pass, pass], 2)).toBe('recovered');
    expect(status.failing).toBe(false);
  });

  it('ignores rounds in which no case got an answer', () => {
    const status = new CanaryStatus();
    status.recordRound(1, [fail], 1);
    expect(status.recordRound(2, [noAnswer], 1)).toBeNull();
    expect(status.failing).toBe(true);
    expect(status.snapshot()).toMatchObject({ checkedAt: 1, errors: [{ case: 'b', error: 'HTTP 503' }] });
  });
});
