import { matchesJsonSchema } from '../calls/structured-output';
import type { CanaryCase } from '../config/router-config.schema';

const EXCERPT_CHARS = 160;

/** One case on one target: passed, or what was expected and a short excerpt of what came back. */
export interface CanaryVerdict {
  case: string;
  language: string;
  passed: boolean;
  /** The check that failed (the first one), or every check when it passed. */
  expected: string;
  /** The reply, whitespace collapsed, cut to 160 characters. */
  excerpt: string;
}

/** A case whose call got no answer (network, 5xx, timeout): no verdict; health and probes judge that. */
export interface CanaryCallFailure {
  case: string;
  language: string;
  error: string;
}

export type CanaryCaseResult = CanaryVerdict | CanaryCallFailure;

export const isVerdict = (result: CanaryCaseResult): result is CanaryVerdict => 'passed' in result;
export const isCallFailure = (result: CanaryCaseResult): result is CanaryCallFailure => !isVerdict(result);

export function excerptOf(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= EXCERPT_CHARS ? flat : `${flat.slice(0, EXCERPT_CHARS - 1)}…`;
}

/**
 * Judges one reply against its case: every `contains` text must appear (case-insensitive, with
 * whitespace runs treated as one space, so a reflowed answer still passes), the `regex` must
 * match, and the reply must be JSON that `json_schema` accepts (a ```json fence is allowed).
 * Pure; the checks run in that order and the first failure is the one reported.
 */
export function judgeCanary(testCase: CanaryCase, reply: string): CanaryVerdict {
  const base = { case: testCase.name, language: testCase.language, excerpt: excerptOf(reply) };
  const { contains, regex, json_schema: schema } = testCase.expect;
  const checks: string[] = [];
  if (contains !== undefined) {
    const haystack = normalise(reply);
    for (const text of contains) {
      const expected = `contains "${text}"`;
      if (!haystack.includes(normalise(text))) return { ...base, passed: false, expected };
      checks.push(expected);
    }
  }
  if (regex !== undefined) {
    const expected = `matches /${regex}/u`;
    if (!new RegExp(regex, 'u').test(reply)) return { ...base, passed: false, expected };
    checks.push(expected);
  }
  if (schema !== undefined) {
    const expected = 'JSON that the case\'s json_schema accepts';
    if (!matchesJsonSchema(reply, schema)) return { ...base, passed: false, expected };
    checks.push(expected);
  }
  return { ...base, passed: true, expected: checks.join('; ') };
}

function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim().toLowerCase();
}
