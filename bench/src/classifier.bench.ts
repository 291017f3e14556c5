import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { COMPLEXITIES, TASK_TYPES } from '@switchyard/contracts';
import { estimateTokens, loadRouterConfig, MAX_CLASSIFIED_CHARS, MetaExamplesFileSchema, type MetaExample } from '@switchyard/router';
import { fixed, heading, percentile, table, verdict } from './support/report';

const CONFIG_DIR = resolve(__dirname, '../../config');
/** The floors the unit test also holds the classifier to. */
const TASK_TYPE_FLOOR = 0.85;
const COMPLEXITY_FLOOR = 0.55;
const TIMING_ROUNDS = 200;

export interface ClassifierBenchResult {
  taskTypeAccuracy: number;
  complexityAccuracy: number;
  confidentShare: number;
  confidentAccuracy: number;
  p50Us: number;
  p99Us: number;
  /** The router's own per-call token count of the same texts, timed in the same run: the yardstick on a noisy machine. */
  baselineP50Us: number;
  pass: boolean;
}

const hasChinese = (text: string) => /[\u4e00-\u9fff]/u.test(text);

/**
 * `node bench/run.js classifier`: the inferred-meta classifier of the shipped router.yaml on the
 * held-out set (config/classifier/meta-heldout.yaml, never trained on): accuracy per field and
 * language, the confusion of task types, the share above the shipped threshold and its
 * accuracy, and the cost of one classification.
 */
export function runClassifierBench(): ClassifierBenchResult {
  heading('Bench: inferred meta classifier (held-out accuracy, cost per call)');
  const compiled = loadRouterConfig(resolve(CONFIG_DIR, 'router.yaml'));
  const classifier = compiled.classifier;
  if (classifier === undefined) throw new Error('config/router.yaml has inferred_meta turned off');
  const minScore = compiled.config.inferred_meta.min_score;
  const heldOut = MetaExamplesFileSchema.parse(parse(readFileSync(resolve(CONFIG_DIR, 'classifier/meta-heldout.yaml'), 'utf8'))).examples;
  const guesses = heldOut.map((example) => ({ example, guess: classifier.classify(example.text) }));

  const accuracy = (rows: typeof guesses, field: 'task_type' | 'complexity') => rows.filter(({ example, guess }) => guess[field]?.value === example[field]).length / rows.length;
  const languages = [
    ['all', guesses],
    ['English', guesses.filter(({ example }) => !hasChinese(example.text))],
    ['Chinese', guesses.filter(({ example }) => hasChinese(example.text))],
  ] as const;
  console.log(`${classifier.exampleCount} training examples (config/classifier/meta-examples.yaml); ${heldOut.length} held-out examples; threshold min_score ${minScore}\n`);
  console.log(
    table(
      ['held-out set', 'examples', 'task_type accuracy', 'complexity accuracy'],
      languages.map(([name, rows]) => [name, String(rows.length), `${fixed(accuracy(rows, 'task_type') * 100, 1)} %`, `${fixed(accuracy(rows, 'complexity') * 100, 1)} %`]),
    ),
  );

  const labels = TASK_TYPES.filter((label) => heldOut.some((example: MetaExample) => example.task_type === label));
  console.log('\ntask_type confusion (rows: labelled, columns: guessed):\n');
  console.log(table(['labelled \\ guessed', ...labels], labels.map((row) => [row, ...labels.map((column) => String(guesses.filter(({ example, guess }) => example.task_type === row && guess.task_type?.value === column).length))])));
  const complexityLabels = [...COMPLEXITIES];
  console.log('\ncomplexity confusion:\n');
  console.log(
    table(
      ['labelled \\ guessed', ...complexityLabels],
      complexityLabels.map((row) => [row, ...complexityLabels.map((column) => String(guesses.filter(({ example, guess }) => example.complexity === row && guess.complexity?.value === column).length))]),
    ),
  );

  const confident = guesses.filter(({ guess }) => (guess.task_type?.score ?? 0) >= minScore);
  const confidentAccuracy = accuracy(confident, 'task_type');
  console.log(
    `\ntask_type at score ≥ ${minScore} (applied; the rest fall back to the default routes): ${fixed((confident.length / guesses.length) * 100, 1)} % of requests, ${fixed(confidentAccuracy * 100, 1)} % right`,
  );

  // Cost: every held-out text classified TIMING_ROUNDS times after a warm-up, per call by round,
  // interleaved with the same texts' token estimate (which every routed call already pays).
  const texts = heldOut.map((example) => example.text);
  const perCall = (work: (text: string) => unknown): number => {
    const start = process.hrtime.bigint();
    for (const text of texts) work(text);
    return Number(process.hrtime.bigint() - start) / 1_000 / texts.length;
  };
  const classify = (text: string) => classifier.classify(text);
  const countTokens = (text: string) => estimateTokens([{ content: text }]);
  for (let round = 0; round < 20; round += 1) {
    perCall(classify);
    perCall(countTokens);
  }
  const perCallUs: number[] = [];
  const baselineUs: number[] = [];
  for (let round = 0; round < TIMING_ROUNDS; round += 1) {
    perCallUs.push(perCall(classify));
    baselineUs.push(perCall(countTokens));
  }
  const longText = `${texts.join(' ')} `.repeat(4);
  const longStart = process.hrtime.bigint();
  for (let i = 0; i < 200; i += 1) classifier.classify(longText);
  const longUs = Number(process.hrtime.bigint() - longStart) / 1_000 / 200;

  const result: ClassifierBenchResult = {
    taskTypeAccuracy: accuracy(guesses, 'task_type'),
    complexityAccuracy: accuracy(guesses, 'complexity'),
    confidentShare: confident.length / guesses.length,
    confidentAccuracy,
    p50Us: percentile(perCallUs, 50),
    p99Us: percentile(perCallUs, 99),
    baselineP50Us: percentile(baselineUs, 50),
    pass: false,
  };
  result.pass = result.taskTypeAccuracy >= TASK_TYPE_FLOOR && result.complexityAccuracy >= COMPLEXITY_FLOOR;
  console.log(
    `\ncost per classification (both fields, held-out texts of ${Math.min(...texts.map((t) => t.length))}–${Math.max(...texts.map((t) => t.length))} chars; ${TIMING_ROUNDS} rounds): p50 ${fixed(result.p50Us, 1)} µs, p99 ${fixed(result.p99Us, 1)} µs` +
      ` — ${fixed(result.p50Us / result.baselineP50Us, 1)}× the o200k token count of the same texts (p50 ${fixed(result.baselineP50Us, 1)} µs, same run);` +
      ` a ${fixed(longText.length)}-char message (read up to its first ${fixed(MAX_CLASSIFIED_CHARS)}): ${fixed(longUs, 1)} µs`,
  );
  console.log(`\naccuracy floors: task_type ≥ ${fixed(TASK_TYPE_FLOOR * 100)} %, complexity ≥ ${fixed(COMPLEXITY_FLOOR * 100)} %: ${verdict(result.pass)}`);
  return result;
}
