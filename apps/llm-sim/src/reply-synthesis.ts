import type { ChatMessage } from './chat-request.schema';

/** Same shape as `ModelSummarySchema` in @switchyard/contracts: what agents parse out of a reply. */
export interface SimulatedSummary {
  conclusion: string;
  evidence: string[];
  confidence: number;
}

const CONCLUSION_CHARS = 120;
const MAX_EVIDENCE = 3;
const EVIDENCE_CHARS = 100;

export function messageText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  return content.map((part) => part.text ?? '').join('');
}

export function lastUserMessage(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (message?.role === 'user') return messageText(message.content);
  }
  return '';
}

export function totalMessageChars(messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) total += messageText(message.content).length;
  return total;
}

export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}

export function isLocalTarget(targetName: string): boolean {
  return targetName.startsWith('local');
}

/** Local models are made to sound a little less sure, so routing demos show a difference. */
export function confidenceFor(targetName: string): number {
  return isLocalTarget(targetName) ? 0.8 : 0.9;
}

export function evidenceFrom(userText: string): string[] {
  return collapseWhitespace(userText)
    .split(/(?<=[.!?])\s+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 0)
    .slice(0, MAX_EVIDENCE)
    .map((sentence) => clip(sentence, EVIDENCE_CHARS));
}

/**
 * The part of a prompt a model would answer from. Prompts usually open with the ask and put
 * the material after a blank line; lines that only introduce what follows ("Findings:") and
 * the `[target]` tags of earlier simulated answers are left out, so answers read naturally.
 */
export function materialOf(userText: string): string {
  const paragraphs = userText
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  const body = paragraphs.length > 1 ? paragraphs.slice(1) : paragraphs;
  return collapseWhitespace(
    body
      .map((p) =>
        p
          .split('\n')
          .filter((line) => !/:\s*$/.test(line.trim()))
          .join(' '),
      )
      .join(' ')
      .replace(/\[[\w.-]+\]\s*/g, ''),
  );
}

export function synthesizeSummary(targetName: string, userText: string): SimulatedSummary {
  const material = materialOf(userText);
  const gist = clip(material, CONCLUSION_CHARS);
  return {
    conclusion: `[${targetName}] ${gist || '(no user message)'}`,
    evidence: evidenceFrom(material),
    confidence: confidenceFor(targetName),
  };
}

export function summaryContent(targetName: string, userText: string): string {
  return JSON.stringify(synthesizeSummary(targetName, userText));
}

/** Chatty prose where JSON was asked for: the failure a real model produces most often. */
export function garbageContent(targetName: string, userText: string): string {
  const gist = collapseWhitespace(userText).slice(0, 60);
  return `Sure! Here's what I found: conclusion is probably that "${gist}" holds, but I'm not certain (${targetName}).`;
}

/** Word pairs a wrong answer swaps, both ways: the answer keeps its shape and reads plausibly. */
const SWAPPED_WORDS: readonly (readonly [string, string])[] = [
  ['increase', 'decrease'],
  ['overdue', 'paid'],
  ['增加', '减少'],
  ['已发货', '未发货'],
  ['财务', '技术'],
];
const SWAPS = new Map(SWAPPED_WORDS.flatMap(([a, b]) => [[a, b], [b, a]] as const));
// Latin words only as whole words ("paid" but not "unpaid"); Chinese has no word boundaries to look for.
const SWAP_PATTERN = new RegExp(
  [...SWAPS.keys()]
    .sort((a, b) => b.length - a.length)
    .map((word) => (/^[a-z]+$/i.test(word) ? `\\b${word}\\b` : word))
    .join('|'),
  'gi',
);

/**
 * The `wrong` mode's answer: the right answer with every digit moved by five and a few words
 * turned into their opposites — same shape, fluent, and wrong. In a JSON answer only the
 * strings change, so it stays valid JSON of the same schema (numbers such as `confidence` stay in
 * range). Only a check of the content (a business canary) notices.
 */
export function wrongContent(rightContent: string): string {
  let json: unknown;
  try {
    json = JSON.parse(rightContent);
  } catch {
    return wrongText(rightContent);
  }
  return JSON.stringify(wrongStrings(json));
}

function wrongStrings(value: unknown): unknown {
  if (typeof value === 'string') return wrongText(value);
  if (Array.isArray(value)) return value.map(wrongStrings);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, wrongStrings(item)]));
  return value;
}

function wrongText(text: string): string {
  return text
    .replace(/[0-9]/g, (digit) => String((Number(digit) + 5) % 10))
    .replace(SWAP_PATTERN, (word) => {
      const swapped = SWAPS.get(word.toLowerCase()) ?? word;
      return word[0] !== undefined && word[0] !== word[0].toLowerCase() ? swapped[0]!.toUpperCase() + swapped.slice(1) : swapped;
    });
}
