import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The shipped economics workload: bench/fixtures/economics-workload.jsonl, one request per line. */
export const WORKLOAD_FILE = resolve(__dirname, '../../fixtures/economics-workload.jsonl');

export type WorkloadTask = 'classify' | 'extract' | 'summarize' | 'code' | 'reasoning' | 'chat';

export interface WorkloadLine {
  id: number;
  /** What the request is, whether or not its metadata says so (some leave task_type out). */
  task: WorkloadTask;
  lang: 'en' | 'zh';
  sensitive: boolean;
  /** The id of the earlier line this one repeats word for word, if it is a repeat. */
  repeat_of?: number;
  /** Lines sharing a burst are sent at the same moment (identical concurrent requests). */
  burst?: number;
  /** The POST /v1/chat/completions body. */
  body: {
    model: 'auto';
    messages: { role: 'system' | 'user'; content: string }[];
    temperature: number;
    max_tokens: number;
    metadata: Record<string, string>;
  };
}

export function loadWorkload(file = WORKLOAD_FILE): WorkloadLine[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line, index) => {
      try {
        return JSON.parse(line) as WorkloadLine;
      } catch (error) {
        throw new Error(`${file}:${index + 1}: not JSON (${error instanceof Error ? error.message : String(error)})`, { cause: error });
      }
    });
}

/** Consecutive lines of one burst form one wave; every other line is a wave of its own. */
export function waves(lines: readonly WorkloadLine[]): WorkloadLine[][] {
  const out: WorkloadLine[][] = [];
  for (const line of lines) {
    const last = out.at(-1);
    if (line.burst !== undefined && last?.[0]?.burst === line.burst) last.push(line);
    else out.push([line]);
  }
  return out;
}

/** Requests whose body is word for word one sent earlier: the planned repeats plus distinct lines that happen to coincide (few templates). */
export function repeatedBodies(lines: readonly WorkloadLine[]): number {
  const seen = new Set<string>();
  let repeated = 0;
  for (const line of lines) {
    const body = JSON.stringify(line.body);
    if (seen.has(body)) repeated += 1;
    else seen.add(body);
  }
  return repeated;
}
