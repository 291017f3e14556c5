import { COMPLEXITIES, TASK_TYPES, type Complexity, type TaskType } from '@switchyard/contracts';
import { charNgramCounts, normalizeText } from './char-ngrams';
import type { MetaExample, MetaExamplesFile, MetaRule } from './meta-examples.schema';

/** Only the start of a long message is read: the instruction is there, and the cost stays flat. */
export const MAX_CLASSIFIED_CHARS = 1_000;

/**
 * One field's best guess: from a rule (score 1) or the nearest example centroid, whose
 * `score` is its lead over the runner-up centroid: (best − second) / best cosine, 0..1.
 */
export interface MetaGuess<T extends string> {
  value: T;
  score: number;
  /** The cosine to the chosen centroid (examples only). */
  similarity?: number;
  source: 'rule' | 'examples';
  /** The rule's name, when a rule decided. */
  rule?: string;
}

export interface MetaClassification {
  task_type?: MetaGuess<TaskType>;
  complexity?: MetaGuess<Complexity>;
}

export interface WantedFields {
  task_type: boolean;
  complexity: boolean;
}

interface CompiledRule {
  name: string;
  pattern: RegExp | undefined;
  minChars: number | undefined;
  set: MetaRule['set'];
}

/** A field's labels, and where their centroid weights sit in a gram's row. */
interface LabelSet<L extends string> {
  labels: readonly L[];
  offset: number;
}

const TASK_TYPE_LABELS: LabelSet<TaskType> = { labels: TASK_TYPES, offset: 1 };
const COMPLEXITY_LABELS: LabelSet<Complexity> = { labels: COMPLEXITIES, offset: 1 + TASK_TYPES.length };
const ROW_LENGTH = 1 + TASK_TYPES.length + COMPLEXITIES.length;

/**
 * Nearest centroid over TF-IDF weighted character n-grams, for both fields at once. One row per
 * gram in one flat array: its idf, then every task type's and every complexity's centroid
 * weight, so a query costs one map lookup per distinct gram and reads memory in order.
 */
class CentroidTable {
  private constructor(
    private readonly rowOf: ReadonlyMap<string, number>,
    private readonly weights: Float64Array,
  ) {}

  static build(documents: readonly { grams: Map<string, number>; example: MetaExample }[]): CentroidTable {
    const rowOf = new Map<string, number>();
    const documentFrequency: number[] = [];
    for (const { grams } of documents) {
      for (const gram of grams.keys()) {
        let row = rowOf.get(gram);
        if (row === undefined) {
          row = rowOf.size;
          rowOf.set(gram, row);
          documentFrequency.push(0);
        }
        documentFrequency[row]! += 1;
      }
    }
    const weights = new Float64Array(rowOf.size * ROW_LENGTH);
    documentFrequency.forEach((df, row) => (weights[row * ROW_LENGTH] = Math.log((documents.length + 1) / (df + 1)) + 1));
    const perLabel = new Float64Array(ROW_LENGTH);
    for (const { grams, example } of documents) {
      const taskType = TASK_TYPE_LABELS.offset + TASK_TYPES.indexOf(example.task_type);
      const complexity = COMPLEXITY_LABELS.offset + COMPLEXITIES.indexOf(example.complexity);
      perLabel[taskType]! += 1;
      perLabel[complexity]! += 1;
      const tfidf = [...grams].map(([gram, count]) => {
        const base = rowOf.get(gram)! * ROW_LENGTH;
        return { base, weight: (1 + Math.log(count)) * weights[base]! };
      });
      const length = Math.sqrt(tfidf.reduce((sum, { weight }) => sum + weight * weight, 0));
      for (const { base, weight } of tfidf) {
        weights[base + taskType]! += weight / length;
        weights[base + complexity]! += weight / length;
      }
    }
    // Mean of the unit vectors, then unit length again: every label's centroid weighs the same.
    const norms = new Float64Array(ROW_LENGTH);
    for (let base = 0; base < weights.length; base += ROW_LENGTH) {
      for (let column = 1; column < ROW_LENGTH; column += 1) {
        const mean = perLabel[column]! === 0 ? 0 : weights[base + column]! / perLabel[column]!;
        weights[base + column] = mean;
        norms[column]! += mean * mean;
      }
    }
    for (let base = 0; base < weights.length; base += ROW_LENGTH) {
      for (let column = 1; column < ROW_LENGTH; column += 1) weights[base + column] = norms[column]! === 0 ? 0 : weights[base + column]! / Math.sqrt(norms[column]!);
    }
    return new CentroidTable(rowOf, weights);
  }

  /**
   * The dot product of the query with every centroid (by row column) and the query's norm; a
   * gram no example has is in no centroid, and counting it in the norm would only punish long
   * texts, so it is left out. Undefined for a text that shares no gram with any example.
   */
  dots(grams: ReadonlyMap<string, number>): { dots: Float64Array; norm: number } | undefined {
    const dots = new Float64Array(ROW_LENGTH);
    const weights = this.weights;
    let norm = 0;
    for (const [gram, count] of grams) {
      const row = this.rowOf.get(gram);
      if (row === undefined) continue;
      const base = row * ROW_LENGTH;
      const weight = (1 + Math.log(count)) * weights[base]!;
      norm += weight * weight;
      for (let column = 1; column < ROW_LENGTH; column += 1) dots[column]! += weight * weights[base + column]!;
    }
    return norm === 0 ? undefined : { dots, norm: Math.sqrt(norm) };
  }
}

/**
 * The nearest label of one field: its cosine (`similarity`) and its lead over the runner-up as
 * a share of its own cosine (`score`, 0..1). Cosines run lower for Chinese (sparser grams) than
 * for English; the lead does not.
 */
function nearest<L extends string>(set: LabelSet<L>, query: { dots: Float64Array; norm: number }): MetaGuess<L> | undefined {
  let best = -1;
  let second = -1;
  for (let index = 0; index < set.labels.length; index += 1) {
    const value = query.dots[set.offset + index]!;
    if (best < 0 || value > query.dots[set.offset + best]!) {
      second = best;
      best = index;
    } else if (second < 0 || value > query.dots[set.offset + second]!) {
      second = index;
    }
  }
  const top = query.dots[set.offset + best]!;
  if (top <= 0) return undefined;
  const runnerUp = second < 0 ? 0 : Math.max(0, query.dots[set.offset + second]!);
  return { value: set.labels[best]!, score: round((top - runnerUp) / top), similarity: round(top / query.norm), source: 'examples' };
}

/**
 * The small local classifier behind inferred request meta (seed 004 §3.2): rules first (first
 * match per field wins), then the nearest example centroid. Built once per config load; a
 * classification is pure and allocation-light.
 */
export class MetaClassifier {
  private constructor(
    private readonly rules: readonly CompiledRule[],
    private readonly centroids: CentroidTable,
    readonly exampleCount: number,
  ) {}

  static fromExamples(file: MetaExamplesFile): MetaClassifier {
    const documents = file.examples.map((example: MetaExample) => ({ example, grams: charNgramCounts(readableStart(example.text)) }));
    const rules = file.rules.map((rule) => ({ name: rule.name, pattern: rule.pattern === undefined ? undefined : new RegExp(rule.pattern, 'iu'), minChars: rule.min_chars, set: rule.set }));
    return new MetaClassifier(rules, CentroidTable.build(documents), documents.length);
  }

  /** The best guess for each wanted field (a rule's, else the examples'), whatever its score. */
  classify(text: string, wanted: WantedFields = { task_type: true, complexity: true }): MetaClassification {
    const result: MetaClassification = {};
    for (const rule of this.rules) {
      if (rule.minChars !== undefined && text.length < rule.minChars) continue;
      if (rule.pattern !== undefined && !rule.pattern.test(text)) continue;
      if (wanted.task_type && result.task_type === undefined && rule.set.task_type !== undefined) {
        result.task_type = { value: rule.set.task_type, score: 1, source: 'rule', rule: rule.name };
      }
      if (wanted.complexity && result.complexity === undefined && rule.set.complexity !== undefined) {
        result.complexity = { value: rule.set.complexity, score: 1, source: 'rule', rule: rule.name };
      }
    }
    const needTaskType = wanted.task_type && result.task_type === undefined;
    const needComplexity = wanted.complexity && result.complexity === undefined;
    if (!needTaskType && !needComplexity) return result;
    const query = this.centroids.dots(charNgramCounts(readableStart(text)));
    if (query === undefined) return result;
    if (needTaskType) {
      const guess = nearest(TASK_TYPE_LABELS, query);
      if (guess) result.task_type = guess;
    }
    if (needComplexity) {
      const guess = nearest(COMPLEXITY_LABELS, query);
      if (guess) result.complexity = guess;
    }
    return result;
  }
}

/** The normalised start of a message, at most `MAX_CLASSIFIED_CHARS` (the slack before normalising covers collapsed whitespace). */
function readableStart(text: string): string {
  return normalizeText(text.slice(0, MAX_CLASSIFIED_CHARS * 2)).slice(0, MAX_CLASSIFIED_CHARS);
}

const round = (score: number) => Math.round(score * 1_000) / 1_000;
