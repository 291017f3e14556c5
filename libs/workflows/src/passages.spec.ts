import { preparePassages } from './passages';

const filler = (seed: string, words: number) =>
  Array.from({ length: words }, (_, i) => `${seed}${String.fromCharCode(97 + (i % 26))}`).join(' ') + '.';

const sum = (passages: string[]) => passages.reduce((n, p) => n + p.length, 0);

describe('preparePassages', () => {
  it('keeps every paragraph, in order, when the document fits the budget', () => {
    const text = 'First paragraph.\n\nSecond paragraph.\n\nThird paragraph.';
    const prepared = preparePassages(text, 'anything', 1_000);
    expect(prepared).toEqual({
      passages: ['First paragraph.', 'Second paragraph.', 'Third paragraph.'],
      totalChars: 49,
      keptChars: 49,
      truncated: false,
    });
  });

  it('normalises line endings and whitespace and joins the lines of one paragraph', () => {
    const text = '  Line one\r\nline   two\t\tcontinues\r\n\r\n\r\nNext\n \nLast  ';
    const prepared = preparePassages(text, 'q', 1_000);
    expect(prepared.passages).toEqual(['Line one line two continues', 'Next', 'Last']);
    expect(prepared.truncated).toBe(false);
  });

  it('keeps a document exactly at the budget whole', () => {
    const text = 'abcde\n\nfghij';
    expect(preparePassages(text, 'q', 10)).toMatchObject({ passages: ['abcde', 'fghij'], keptChars: 10, truncated: false });
  });

  it('over budget keeps the passages most relevant to the question, in document order', () => {
    const paragraphs = [
      filler('intro', 30),
      `The warranty period for the pump is 24 months. ${filler('pumpx', 20)}`,
      filler('noise', 30),
      filler('other', 30),
      `Claims under the warranty period need an invoice. ${filler('claim', 20)}`,
      filler('tail', 30),
    ];
    const text = paragraphs.join('\n\n');
    const budget = paragraphs[1]!.length + paragraphs[4]!.length;
    const prepared = preparePassages(text, 'What is the warranty period?', budget);

    expect(prepared.truncated).toBe(true);
    expect(prepared.totalChars).toBe(sum(paragraphs));
    expect(prepared.passages).toEqual([paragraphs[1], paragraphs[4]]);
    expect(prepared.keptChars).toBe(budget);
  });

  it('ranks a passage that matches more question terms first', () => {
    const weak = `Pricing is listed elsewhere. ${filler('weakp', 10)}`;
    const strong = `Pricing and delivery terms for the contract. ${filler('strng', 10)}`;
    const text = [filler('start', 10), weak, strong].join('\n\n');
    // Room for one of the two candidates only.
    const budget = Math.max(weak.length, strong.length) + 5;
    const prepared = preparePassages(text, 'contract pricing delivery terms', budget);
    expect(prepared.passages).toEqual([strong]);
  });

  it('fills leftover room with smaller passages when a relevant one does not fit', () => {
    const big = `Refund policy details: ${filler('bigxx', 200)}`;
    const small = 'Refund within 30 days.';
    const unrelated = 'Office hours are nine to five.';
    const text = [big, small, unrelated].join('\n\n');
    const budget = small.length + unrelated.length + 10; // far less than `big`
    const prepared = preparePassages(text, 'refund policy', budget);
    expect(prepared.passages).toEqual([small, unrelated]);
    expect(prepared.keptChars).toBe(small.length + unrelated.length);
    expect(prepared.truncated).toBe(true);
  });

  it('never exceeds the budget, and keptChars is what it kept', () => {
    const text = Array.from({ length: 40 }, (_, i) => `Clause ${i} about liability and ${filler(`c${i}x`, 5 + (i % 7) * 6)}`).join('\n\n');
    for (const budget of [50, 173, 400, 999, 1_500]) {
      const prepared = preparePassages(text, 'liability clause', budget);
      expect(prepared.truncated).toBe(true);
      expect(prepared.keptChars).toBeLessThanOrEqual(budget);
      expect(prepared.keptChars).toBe(sum(prepared.passages));
      // document order: every kept passage appears after the previous one
      let cursor = -1;
      for (const passage of prepared.passages) {
        const at = text.indexOf(passage, cursor + 1);
        expect(at).toBeGreaterThan(cursor);
        cursor = at;
      }
    }
  });

  it('keeps nothing when no passage fits the budget', () => {
    const text = `${filler('aaaaa', 20)}\n\n${filler('bbbbb', 20)}`;
    expect(preparePassages(text, 'q', 5)).toMatchObject({ passages: [], keptChars: 0, truncated: true });
  });

  it('splits a long paragraph at sentence ends into passages of at most 1,200 characters', () => {
    const sentence = (i: number) => `Sentence number ${i} says something about the audit findings of the year.`;
    const paragraph = Array.from({ length: 60 }, (_, i) => sentence(i)).join(' ');
    expect(paragraph.length).toBeGreaterThan(3_000);

    const prepared = preparePassages(paragraph, 'audit', 100_000);
    expect(prepared.passages.length).toBeGreaterThan(2);
    for (const passage of prepared.passages) {
      expect(passage.length).toBeLessThanOrEqual(1_200);
      expect(passage.endsWith('.')).toBe(true);
    }
    // Nothing is lost: the pieces put back together are the paragraph.
    expect(prepared.passages.join(' ')).toBe(paragraph);
    expect(prepared.truncated).toBe(false);
  });

  // Chinese ends sentences with 。: a long paragraph of it must be split, not cut short.
  it('keeps every character of a long paragraph without ASCII sentence ends', () => {
    const paragraph = '本合同的保修期为二十四个月，自交付之日起计算。'.repeat(130); // ~3,000 characters
    const prepared = preparePassages(paragraph, '保修期', 100_000);
    expect(prepared.truncated).toBe(false);
    expect(prepared.totalChars).toBe(paragraph.length);
    expect(prepared.passages.join('')).toBe(paragraph);
  });

  it('leaves a paragraph of exactly 1,200 characters whole', () => {
    const paragraph = `${'x'.repeat(1_199)}.`;
    expect(preparePassages(paragraph, 'q', 100_000).passages).toEqual([paragraph]);
  });

  it('ignores stop words when scoring relevance', () => {
    const stopOnly = 'What is the and of this that.';
    const relevant = 'Turbine maintenance schedule.';
    const text = [stopOnly, relevant].join('\n\n');
    const prepared = preparePassages(text, 'what is the turbine maintenance schedule of this', relevant.length);
    expect(prepared.passages).toEqual([relevant]);
  });
});
