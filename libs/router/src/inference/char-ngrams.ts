/** Character n-gram lengths: single characters carry meaning in Chinese, two- and three-grams in both languages. */
const GRAM_LENGTHS = [1, 2, 3] as const;

/** Lower case, full-width forms folded (NFKC), runs of whitespace as one space. */
export function normalizeText(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
}

/**
 * Counts of every character 1-, 2- and 3-gram of `text` (already normalised), by code point
 * so that a Chinese character or an emoji is one character. No tokenizer: the same code
 * reads English and Chinese.
 */
export function charNgramCounts(text: string): Map<string, number> {
  const chars = Array.from(text);
  const counts = new Map<string, number>();
  for (const length of GRAM_LENGTHS) {
    for (let start = 0; start + length <= chars.length; start += 1) {
      const gram = length === 1 ? chars[start]! : chars.slice(start, start + length).join('');
      // A lone space says nothing.
      if (gram === ' ') continue;
      counts.set(gram, (counts.get(gram) ?? 0) + 1);
    }
  }
  return counts;
}
