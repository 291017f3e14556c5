/** Deterministic text preparation behind the `passages` template filter: no model call, no I/O. */

const WORD = /[\p{L}\p{N}]+/gu;
const STOP_WORDS = new Set(['the', 'a', 'an', 'and', 'or', 'of', 'to', 'in', 'on', 'for', 'is', 'are', 'was', 'were', 'what', 'which', 'who', 'how', 'does', 'do', 'with', 'by', 'be', 'it', 'this', 'that', 'at', 'as', 'from']);

export interface PreparedDocument {
  passages: string[];
  totalChars: number;
  keptChars: number;
  truncated: boolean;
}

function terms(text: string): Set<string> {
  return new Set((text.toLowerCase().match(WORD) ?? []).filter((w) => w.length > 1 && !STOP_WORDS.has(w)));
}

/**
 * Splits a document into paragraph-sized passages and keeps the ones most relevant to the
 * question, in document order, within `maxChars` (the input cap of the extract call).
 */
export function preparePassages(text: string, question: string, maxChars: number): PreparedDocument {
  const normalized = text.replace(/\r\n?/g, '\n').replace(/[ \t]+/g, ' ').trim();
  const passages = normalized
    .split(/\n\s*\n/)
    .flatMap((p) => splitLong(p.replace(/\s*\n\s*/g, ' ').trim(), 1_200))
    .filter((p) => p.length > 0);
  const totalChars = passages.reduce((sum, p) => sum + p.length, 0);
  if (totalChars <= maxChars) return { passages, totalChars, keptChars: totalChars, truncated: false };

  const wanted = terms(question);
  const ranked = passages
    .map((passage, index) => {
      const words = terms(passage);
      let hits = 0;
      for (const w of wanted) if (words.has(w)) hits += 1;
      return { index, passage, score: hits / Math.sqrt(words.size + 1) };
    })
    .sort((a, b) => b.score - a.score || a.index - b.index);
  const kept: typeof ranked = [];
  let keptChars = 0;
  for (const candidate of ranked) {
    if (keptChars + candidate.passage.length > maxChars) continue;
    kept.push(candidate);
    keptChars += candidate.passage.length;
  }
  kept.sort((a, b) => a.index - b.index);
  return { passages: kept.map((k) => k.passage), totalChars, keptChars, truncated: true };
}

/** Paragraphs over `limit` split at sentence ends (Latin and CJK); a longer sentence is cut into pieces, never dropped. */
function splitLong(passage: string, limit: number): string[] {
  if (passage.length <= limit) return [passage];
  const sentences = passage.match(/[^.!?。！？]+[.!?。！？]*\s*/g) ?? [passage];
  const out: string[] = [];
  let current = '';
  for (const sentence of sentences) {
    for (let start = 0; start < sentence.length; start += limit) {
      const piece = sentence.slice(start, start + limit);
      if (current.length + piece.length > limit && current) {
        out.push(current.trim());
        current = '';
      }
      current += piece;
    }
  }
  if (current.trim()) out.push(current.trim());
  return out;
}
