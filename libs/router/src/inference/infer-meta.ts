import type { Complexity, TaskType } from '@switchyard/contracts';
import type { MetaClassifier, MetaGuess } from './meta-classifier';

/** A guess and whether it was used: below the confidence threshold the field keeps its default, so the default routes apply. */
export type InferredField<T extends string> = MetaGuess<T> & { applied: boolean };

/** What explain and the gateway report about inferred meta. */
export interface InferredMeta {
  task_type?: InferredField<TaskType>;
  complexity?: InferredField<Complexity>;
}

export interface MetaInference {
  /** The fields to add to the request meta (only the applied guesses). */
  fields: { task_type?: TaskType; complexity?: Complexity };
  inferred: InferredMeta;
}

/**
 * Fills in `task_type` / `complexity` the caller left out (`given` is the meta before
 * defaults) from the last user message. Fields the caller gave are never touched; a guess
 * scoring under `minScore` is reported but not applied. Undefined when nothing was missing
 * or there is no user message to read.
 */
export function inferMissingMeta(
  classifier: MetaClassifier,
  minScore: number,
  given: Readonly<Record<string, unknown>>,
  messages: readonly { role?: string; content: string }[],
): MetaInference | undefined {
  const wanted = { task_type: given.task_type === undefined, complexity: given.complexity === undefined };
  if (!wanted.task_type && !wanted.complexity) return undefined;
  const text = lastUserText(messages);
  if (text === undefined) return undefined;
  const guess = classifier.classify(text, wanted);
  const fields: MetaInference['fields'] = {};
  const inferred: InferredMeta = {};
  if (guess.task_type) {
    const applied = guess.task_type.score >= minScore;
    inferred.task_type = { ...guess.task_type, applied };
    if (applied) fields.task_type = guess.task_type.value;
  }
  if (guess.complexity) {
    const applied = guess.complexity.score >= minScore;
    inferred.complexity = { ...guess.complexity, applied };
    if (applied) fields.complexity = guess.complexity.value;
  }
  return { fields, inferred };
}

function lastUserText(messages: readonly { role?: string; content: string }[]): string | undefined {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index]!;
    if ((message.role === undefined || message.role === 'user') && message.content.trim() !== '') return message.content;
  }
  return undefined;
}

/** `task_type=code(rule:code_fence);complexity=low(0.12)`: the `x-switchyard-inferred` header value. */
export function describeInferredMeta(inferred: InferredMeta): string {
  const parts: string[] = [];
  for (const field of ['task_type', 'complexity'] as const) {
    const guess = inferred[field];
    if (guess === undefined) continue;
    const how = guess.source === 'rule' ? `rule:${guess.rule ?? ''}` : guess.score.toFixed(3);
    parts.push(`${field}=${guess.value}(${how})${guess.applied ? '' : ':not_applied'}`);
  }
  return parts.join(';');
}
