import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { loadRouterConfig } from '../config/router-config.loader';
import { RouterConfigError } from '../config/router-config.error';
import { inferMissingMeta, describeInferredMeta } from './infer-meta';
import { loadMetaClassifier } from './load-meta-classifier';
import { MetaClassifier } from './meta-classifier';
import { MetaExamplesFileSchema, type MetaExamplesFile } from './meta-examples.schema';

const CONFIG_DIR = resolve(__dirname, '../../../../config');
const readExamples = (name: string): MetaExamplesFile => MetaExamplesFileSchema.parse(parse(readFileSync(join(CONFIG_DIR, 'classifier', name), 'utf8')));

describe('MetaClassifier on the shipped examples', () => {
  const training = readExamples('meta-examples.yaml');
  const heldOut = readExamples('meta-heldout.yaml');
  const classifier = MetaClassifier.fromExamples(training);

  it('trains on hundreds of English and Chinese examples of six task types and is not tested on them', () => {
    expect(training.examples.length).toBeGreaterThanOrEqual(300);
    expect(new Set(training.examples.map((e) => e.task_type))).toEqual(new Set(['classify', 'extract', 'summarize', 'code', 'reasoning', 'chat']));
    const trainingTexts = new Set(training.examples.map((e) => e.text));
    expect(heldOut.examples.filter((e) => trainingTexts.has(e.text))).toEqual([]);
    expect(heldOut.examples.some((e) => /[\u4e00-\u9fff]/u.test(e.text)) && heldOut.examples.some((e) => !/[\u4e00-\u9fff]/u.test(e.text))).toBe(true);
  });

  // Measured 92.7 % (task type) and 65.6 % (complexity) when written; the floors leave room for edits to the examples.
  it('gets at least 85 % of held-out task types and 55 % of complexities right', () => {
    const guesses = heldOut.examples.map((example) => ({ example, guess: classifier.classify(example.text) }));
    const taskTypeAccuracy = guesses.filter(({ example, guess }) => guess.task_type?.value === example.task_type).length / guesses.length;
    const complexityAccuracy = guesses.filter(({ example, guess }) => guess.complexity?.value === example.complexity).length / guesses.length;
    expect(taskTypeAccuracy).toBeGreaterThanOrEqual(0.85);
    expect(complexityAccuracy).toBeGreaterThanOrEqual(0.55);
  });

  it('is at least 95 % right on the held-out task types it is confident about (score ≥ the shipped 0.02)', () => {
    const confident = heldOut.examples.map((example) => ({ example, guess: classifier.classify(example.text).task_type! })).filter(({ guess }) => guess.score >= 0.02);
    expect(confident.length / heldOut.examples.length).toBeGreaterThanOrEqual(0.8);
    expect(confident.filter(({ example, guess }) => guess.value === example.task_type).length / confident.length).toBeGreaterThanOrEqual(0.95);
  });

  it('reads Chinese without a tokenizer', () => {
    expect(classifier.classify('帮我用Go写一个读取配置文件的函数').task_type).toMatchObject({ value: 'code' });
    expect(classifier.classify('把这份周会纪要浓缩成三条要点').task_type).toMatchObject({ value: 'summarize', source: 'examples' });
  });
});

describe('rules', () => {
  const file: MetaExamplesFile = {
    rules: [
      { name: 'fence', pattern: '```', set: { task_type: 'code' } },
      { name: 'long', min_chars: 200, set: { complexity: 'high' } },
      { name: 'late_fence', pattern: '```', set: { task_type: 'extract', complexity: 'low' } },
    ],
    examples: [
      { text: 'hello, how are you today?', task_type: 'chat', complexity: 'low' },
      { text: 'summarize this article in three bullet points', task_type: 'summarize', complexity: 'medium' },
    ],
  };
  const classifier = MetaClassifier.fromExamples(file);

  it('win over the examples, first matching rule per field', () => {
    const guess = classifier.classify('hello, how are you today? ```const x = 1```');
    expect(guess.task_type).toEqual({ value: 'code', score: 1, source: 'rule', rule: 'fence' });
    // `fence` says nothing about complexity: the next rule that does decides it.
    expect(guess.complexity).toEqual({ value: 'low', score: 1, source: 'rule', rule: 'late_fence' });
  });

  it('with min_chars fire on long messages only', () => {
    expect(classifier.classify(`summarize this article in three bullet points ${'x'.repeat(200)}`).complexity).toMatchObject({ value: 'high', rule: 'long' });
    expect(classifier.classify('summarize this article in three bullet points').complexity).toMatchObject({ value: 'medium', source: 'examples' });
  });

  it('only decide the fields that are wanted', () => {
    expect(classifier.classify('```x```', { task_type: false, complexity: true })).toEqual({ complexity: { value: 'low', score: 1, source: 'rule', rule: 'late_fence' } });
  });
});

describe('inferMissingMeta', () => {
  const classifier = MetaClassifier.fromExamples(readExamples('meta-examples.yaml'));
  const messages = [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Write a Python function that merges two sorted lists.' },
  ];

  it('fills in what the request left out from its last user message, and says so', () => {
    const inference = inferMissingMeta(classifier, 0.02, {}, messages)!;
    expect(inference.fields.task_type).toBe('code');
    expect(inference.inferred.task_type).toMatchObject({ value: 'code', source: 'examples', applied: true });
    expect(inference.inferred.task_type!.score).toBeGreaterThanOrEqual(0.02);
    expect(describeInferredMeta(inference.inferred)).toMatch(/^task_type=code\(0\.\d{3}\);complexity=(low|medium|high)\(0\.\d{3}\)(:not_applied)?$/);
  });

  it('never touches a field the caller gave', () => {
    const inference = inferMissingMeta(classifier, 0.02, { task_type: 'chat' }, messages)!;
    expect(inference.fields.task_type).toBeUndefined();
    expect(inference.inferred.task_type).toBeUndefined();
    expect(inference.inferred.complexity).toBeDefined();
    expect(inferMissingMeta(classifier, 0.02, { task_type: 'chat', complexity: 'low' }, messages)).toBeUndefined();
  });

  it('falls back to the defaults below the threshold: the guess is reported, not applied', () => {
    const inference = inferMissingMeta(classifier, 1.01, {}, messages)!;
    expect(inference.fields).toEqual({});
    expect(inference.inferred.task_type).toMatchObject({ value: 'code', applied: false });
    expect(describeInferredMeta(inference.inferred)).toContain('task_type=code(');
    expect(describeInferredMeta(inference.inferred)).toContain(':not_applied');
  });

  it('has nothing to read without a user message', () => {
    expect(inferMissingMeta(classifier, 0.02, {}, [{ role: 'system', content: 'be brief' }])).toBeUndefined();
  });
});

describe('loading the examples file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'meta-classifier-'));
    // The shipped router.yaml also names its canary cases relative to itself.
    copyFileSync(join(CONFIG_DIR, 'canaries.yaml'), join(dir, 'canaries.yaml'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const errorOf = (fn: () => unknown): RouterConfigError => {
    try {
      fn();
    } catch (error) {
      if (error instanceof RouterConfigError) return error;
      throw error;
    }
    throw new Error('expected a RouterConfigError');
  };

  it('rejects an unknown label, naming the file and the entry', () => {
    const path = write('examples.yaml', 'examples:\n  - { text: "hi", task_type: chat, complexity: low }\n  - { text: "translate this", task_type: translate, complexity: low }\n');
    const error = errorOf(() => loadMetaClassifier(path, 'router.yaml'));
    expect(error.message).toContain('invalid router config router.yaml');
    expect(error.message).toContain(`router.inferred_meta.examples (${path}) examples.1.task_type`);
    expect(error.message).toMatch(/classify|extract|chat/);
  });

  it('rejects an invalid rule pattern, a rule that sets nothing, bad YAML and a missing file', () => {
    const rules = write('rules.yaml', 'rules:\n  - { name: broken, pattern: "(unclosed", set: { task_type: code } }\n  - { name: empty, min_chars: 10, set: {} }\nexamples:\n  - { text: "hi", task_type: chat, complexity: low }\n');
    const message = errorOf(() => loadMetaClassifier(rules, 'router.yaml')).message;
    expect(message).toContain('rules.0.pattern: not a valid regular expression');
    expect(message).toContain('rules.1.set: sets nothing');
    expect(errorOf(() => loadMetaClassifier(write('bad.yaml', 'examples: [ {text: "x"'), 'router.yaml')).message).toContain('not valid YAML');
    expect(errorOf(() => loadMetaClassifier(join(dir, 'missing.yaml'), 'router.yaml')).message).toContain('cannot be read');
  });

  it('is part of loading router.yaml: a bad examples file rejects the whole config', () => {
    const router = readFileSync(join(CONFIG_DIR, 'router.yaml'), 'utf8').replace('examples: classifier/meta-examples.yaml', 'examples: examples.yaml');
    const routerPath = write('router.yaml', router);
    write('examples.yaml', 'examples:\n  - { text: "hi", task_type: chat, complexity: trivial }\n');
    const error = errorOf(() => loadRouterConfig(routerPath));
    expect(error.source).toBe(routerPath);
    expect(error.message).toContain('examples.0.complexity');
    write('examples.yaml', 'examples:\n  - { text: "hi", task_type: chat, complexity: low }\n');
    expect(loadRouterConfig(routerPath).classifier?.exampleCount).toBe(1);
  });

  it('is skipped when inference is off', () => {
    const router = readFileSync(join(CONFIG_DIR, 'router.yaml'), 'utf8').replace('enabled: true\n    examples: classifier/meta-examples.yaml', 'enabled: false\n    examples: nowhere.yaml');
    expect(loadRouterConfig(write('router.yaml', router)).classifier).toBeUndefined();
  });
});
