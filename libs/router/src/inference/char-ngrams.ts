/** Lower case, full-width forms folded (NFKC), runs of whitespace as one space. */
export function normalizeText(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
}

/**
 * Counts of every character 1-, 2- and 3-gram of `text` (already normalised): single characters
 * carry meaning in Chinese, two- and three-grams in both languages. By code point
 * so that a Chinese character or an emoji is one character. No tokenizer: the same code
 * reads English and Chinese.
 */
export function charNgramCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (gram: string) => counts.set(gram, (counts.get(gram) ?? 0) + 1);
  let previous = '';
  let beforePrevious = '';
  for (const char of text) {
    // A lone space says nothing.
    if (char !== ' ') add(char);
    if (previous !== '') add(previous + char);
    if (beforePrevious !== '') add(beforePrevious + previous + char);
    beforePrevious = previous;
    previous = char;
  }
  return counts;
}
