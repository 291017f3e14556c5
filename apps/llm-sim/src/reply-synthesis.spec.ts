import { ModelSummarySchema } from '@switchyard/contracts';
import { evidenceFrom, garbageContent, materialOf, lastUserMessage, summaryContent, synthesizeSummary, totalMessageChars, wrongContent } from './reply-synthesis';

describe('reply synthesis', () => {
  it('reflects the target and the last user message, whitespace-collapsed and cut at 120 chars', () => {
    const long = `  Why   is\nthe queue ${'x'.repeat(200)}`;
    const summary = synthesizeSummary('local_vllm_32b', long);
    expect(summary.conclusion.startsWith('[local_vllm_32b] Why is the queue xxx')).toBe(true);
    expect(summary.conclusion).toHaveLength('[local_vllm_32b] '.length + 120);
    expect(summary.confidence).toBe(0.8);
    expect(synthesizeSummary('cloud_main', 'x').confidence).toBe(0.9);
    expect(ModelSummarySchema.parse(JSON.parse(summaryContent('cloud_main', long)))).toEqual(synthesizeSummary('cloud_main', long));
  });

  it('has a non-empty conclusion even without a user message', () => {
    expect(synthesizeSummary('t', '')).toEqual({ conclusion: '[t] (no user message)', evidence: [], confidence: 0.9 });
  });

  it('takes up to three sentences as evidence, clipped', () => {
    expect(evidenceFrom('One. Two? Three! Four.')).toEqual(['One.', 'Two?', 'Three!']);
    const [clipped] = evidenceFrom(`${'word '.repeat(40)}end.`);
    expect(clipped?.length).toBe(100);
    expect(clipped?.endsWith('…')).toBe(true);
  });

  it('finds the last user message among text parts and counts all message chars', () => {
    const messages = [
      { role: 'user' as const, content: 'first' },
      { role: 'assistant' as const, content: null },
      { role: 'user' as const, content: [{ type: 'text', text: 'sec' }, { type: 'image_url' }, { type: 'text', text: 'ond' }] },
      { role: 'tool' as const, content: 'result' },
    ];
    expect(lastUserMessage(messages)).toBe('second');
    expect(totalMessageChars(messages)).toBe('first'.length + 'second'.length + 'result'.length);
    expect(lastUserMessage([{ role: 'system', content: 's' }])).toBe('');
  });

  it('garbage is prose that does not parse as JSON, even for JSON-looking input', () => {
    const garbage = garbageContent('t', '{"a": 1}');
    expect(garbage.startsWith('Sure!')).toBe(true);
    expect(() => JSON.parse(garbage)).toThrow();
  });
});

describe('materialOf', () => {
  it('answers from the material after the ask, without intro lines or earlier [target] tags', () => {
    const prompt = 'Question: who pays?\n\nFindings:\nDocument "a" (confidence 0.80): [local_vllm_7b] The buyer pays. Within 30 days.';
    expect(materialOf(prompt)).toBe('Document "a" (confidence 0.80): The buyer pays. Within 30 days.');
    expect(synthesizeSummary('cloud_main', prompt).conclusion).toBe('[cloud_main] Document "a" (confidence 0.80): The buyer pays. Within 30 days.');
  });

  it('uses the whole text when there is no blank line', () => {
    expect(materialOf('Just one paragraph. Two sentences.')).toBe('Just one paragraph. Two sentences.');
  });
});

describe('wrongContent', () => {
  it('moves every digit by five and swaps opposites in the strings, keeping JSON valid, numbers in range and whole words whole', () => {
    const right = JSON.stringify({ conclusion: '[local] 订单 DD20261130-4471 已发货，需要财务部处理; costs increase', evidence: ['unpaid, not paid'], confidence: 0.8 });
    const wrong = JSON.parse(wrongContent(right)) as { conclusion: string; evidence: string[]; confidence: number };
    expect(wrong.conclusion).toBe('[local] 订单 DD75716685-9926 未发货，需要技术部处理; costs decrease');
    expect(wrong.evidence).toEqual(['unpaid, not overdue']);
    expect(wrong.confidence).toBe(0.8);
    expect(wrongContent('Order 12 is overdue.')).toBe('Order 67 is paid.');
  });
});
