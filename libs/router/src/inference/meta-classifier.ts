import { COMPLEXITIES, TASK_TYPES, type Complexity, type TaskType } from '@switchyard/contracts';
import { charNgramCounts, normalizeText } from './char-ngrams';
import type { MetaExample, MetaExamplesFile, MetaRule } from './meta-examples.schema';

/** Only the start of a long message is read: the instruction is there, and the cost stays flat. */
export const MAX_CLASSIFIED_CHARS = 2_000;

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

/**
 * Nearest centroid over TF-IDF weighted character n-grams. One row of label weights per
 * gram, so a query costs one map lookup per distinct gram, whatever the number of labels.
 */
class CentroidIndex<L extends string> {
  private constructor(
    private readonly labels: readonly L[],
    private readonly rows: ReadonlyMap<string, Float64Array>,
    private readonly idf: ReadonlyMap<string, number>,
  ) {}

  static build<L extends string>(labels: readonly L[], documents: readonly { grams: Map<string, number>; label: L }[], idf: ReadonlyMap<string, number>): CentroidIndex<L> {
    const sums = new Map<string, Float64Array>();
    const perLabel = new Array<number>(labels.length).fill(0);
    for (const document of documents) {
      const labelIndex = labels.indexOf(document.label);
      perLabel[labelIndex]! += 1;
      const vector = weighted(document.grams, idf);
      for (const [gram, weight] of vector) {
        let row = sums.get(gram);
        if (row === undefined) {
          row = new Float64Array(labels.length);
          sums.set(gram, row);
        }
        row[labelIndex]! += weight;
      }
    }
    // Mean of the unit vectors, then unit length again: every label's centroid weighs the same.
    const norms = new Float64Array(labels.length);
    for (const row of sums.values()) {
      for (let l = 0; l < labels.length; l += 1) {
        const mean = perLabel[l]! === 0 ? 0 : row[l]! / perLabel[l]!;
        row[l] = mean;
        norms[l]! += mean * mean;
      }
    }
    for (const row of sums.values()) for (let l = 0; l < labels.length; l += 1) row[l] = norms[l]! === 0 ? 0 : row[l]! / Math.sqrt(norms[l]!);
    return new CentroidIndex(labels, sums, idf);
  }

  /**
   * The label whose centroid is nearest by cosine (`similarity`) and its lead over the runner-up
   * as a share of its own cosine (`score`, 0..1); undefined for a text that shares no gram with any example.
   */
  nearest(grams: ReadonlyMap<string, number>): { label: L; score: number; similarity: number } | undefined {
    const dots = new Float64Array(this.labels.length);
    let norm = 0;
    for (const [gram, count] of grams) {
      const idf = this.idf.get(gram);
      // A gram no example has is in no centroid; counting it in the norm would only punish long texts.
      if (idf === undefined) continue;
      const weight = (1 + Math.log(count)) * idf;
      norm += weight * weight;
      const row = this.rows.get(gram);
      if (row === undefined) continue;
      for (let l = 0; l < dots.length; l += 1) dots[l]! += weight * row[l]!;
    }
    if (norm === 0) return undefined;
    let best = 0;
    let second = -1;
    for (let l = 1; l < dots.length; l += 1) {
      if (dots[l]! > dots[best]!) {
        second = best;
        best = l;
      } else if (second < 0 || dots[l]! > dots[second]!) {
        second = l;
      }
    }
    const top = dots[best]!;
    if (top <= 0) return undefined;
    // Cosines run lower for Chinese (sparser grams) than for English; the lead over the runner-up does not.
    return { label: this.labels[best]!, similarity: top / Math.sqrt(norm), score: (top - Math.max(0, dots[second]!)) / top };
  }
}

function weighted(grams: ReadonlyMap<string, number>, idf: ReadonlyMap<string, number>): Map<string, number> {
  const vector = new Map<string, number>();
  let norm = 0;
  for (const [gram, count] of grams) {
    const weight = (1 + Math.log(count)) * (idf.get(gram) ?? 0);
    vector.set(gram, weight);
    norm += weight * weight;
  }
  const length = Math.sqrt(norm);
  if (length > 0) for (const [gram, weight] of vector) vector.set(gram, weight / length);
  return vector;
}

/**
 * The small local classifier behind inferred request meta (seed 004 §3.2): rules first (first
 * match per field wins), then the nearest example centroid. Built once per config load; a
 * classification is pure and allocation-light.
 */
export class MetaClassifier {
  private constructor(
    private readonly rules: readonly CompiledRule[],
    private readonly taskTypes: CentroidIndex<TaskType>,
    private readonly complexities: CentroidIndex<Complexity>,
    readonly exampleCount: number,
  ) {}

  static fromExamples(file: MetaExamplesFile): MetaClassifier {
    const documents = file.examples.map((example: MetaExample) => ({ example, grams: charNgramCounts(normalizeText(example.text).slice(0, MAX_CLASSIFIED_CHARS)) }));
    const documentFrequency = new Map<string, number>();
    for (const { grams } of documents) for (const gram of grams.keys()) documentFrequency.set(gram, (documentFrequency.get(gram) ?? 0) + 1);
    const idf = new Map<string, number>();
    for (const [gram, df] of documentFrequency) idf.set(gram, Math.log((documents.length + 1) / (df + 1)) + 1);
    const rules = file.rules.map((rule) => ({ name: rule.name, pattern: rule.pattern === undefined ? undefined : new RegExp(rule.pattern, 'iu'), minChars: rule.min_chars, set: rule.set }));
    return new MetaClassifier(
      rules,
      CentroidIndex.build(TASK_TYPES, documents.map(({ example, grams }) => ({ grams, label: example.task_type })), idf),
      CentroidIndex.build(COMPLEXITIES, documents.map(({ example, grams }) => ({ grams, label: example.complexity })), idf),
      documents.length,
    );
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
    const grams = charNgramCounts(normalizeText(text.slice(0, MAX_CLASSIFIED_CHARS * 2)).slice(0, MAX_CLASSIFIED_CHARS));
    if (needTaskType) {
      const nearest = this.taskTypes.nearest(grams);
      if (nearest) result.task_type = { value: nearest.label, score: round(nearest.score), similarity: round(nearest.similarity), source: 'examples' };
    }
    if (needComplexity) {
      const nearest = this.complexities.nearest(grams);
      if (nearest) result.complexity = { value: nearest.label, score: round(nearest.score), similarity: round(nearest.similarity), source: 'examples' };
    }
    return result;
  }
}

const round = (score: number) => Math.round(score * 1_000) / 1_000;
