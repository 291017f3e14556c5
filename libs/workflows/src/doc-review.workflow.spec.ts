import { join } from 'node:path';
import type { CallStep, CompiledWorkflow } from './compiled-workflow';
import { itemKeyOf, itemsOf, validateInput, withItemKey } from './input';
import { loadWorkflowsDir } from './load-workflows';
import { renderMessages, responseFormat, stepsOf } from './output';
import { buildJobResult } from './result';

/**
 * config/workflows/doc_review.yaml must behave as the hand-written doc_review agents did:
 * the same steps, meta, token caps, prompt texts, item key and result shape. The expected
 * strings below are the ones those agents built.
 */
const SUMMARY_INSTRUCTIONS =
  'Answer with one JSON object and nothing else: {"conclusion": string, "evidence": string[], "confidence": number between 0 and 1}.';

let docReview: CompiledWorkflow;
beforeAll(() => {
  const loaded = loadWorkflowsDir(join(__dirname, '../../../config/workflows'));
  expect(loaded.errors).toEqual([]);
  docReview = loaded.workflows.get('doc_review')!;
});

const callStep = (role: string) => stepsOf(docReview.agentsByRole.get(role)!)[1] as CallStep;

describe('doc_review.yaml', () => {
  it('has the extract (prepare, extract) and synthesize (gather, synthesize) steps, meta and token caps of today', () => {
    const extract = docReview.agentsByRole.get('extract')!;
    const synthesize = docReview.agentsByRole.get('synthesize')!;
    expect(stepsOf(extract).map((s) => s.name)).toEqual(['prepare', 'extract']);
    expect(stepsOf(synthesize).map((s) => s.name)).toEqual(['gather', 'synthesize']);
    expect(callStep('extract').meta).toEqual({ task_type: 'extract', complexity: 'low', max_output_tokens: 512 });
    expect(callStep('synthesize').meta).toEqual({ task_type: 'reasoning', complexity: 'high', max_output_tokens: 1024 });
    expect(docReview.levels).toEqual([['extract'], ['synthesize']]);
    expect(extract.forEach).toEqual({ path: ['documents'], key: { from: 'id', as: 'document_id', label: 'Document' } });
    // The summary is read from a JSON object reply, as before; no json_schema is sent.
    expect(responseFormat(extract)).toBeNull();
    expect(responseFormat(synthesize)).toBeNull();
  });

  it('renders the extract prompt of today, the whole document when it fits', () => {
    const input = { question: 'What changed?', documents: [{ id: 'doc-1', text: 'First part.\n\nSecond part.' }] };
    const [item] = itemsOf(docReview.agentsByRole.get('extract')!, input);
    const { messages, warnings } = renderMessages(callStep('extract'), { input, item });
    expect(warnings).toEqual([]);
    expect(messages).toEqual([
      {
        role: 'system',
        content: `You are an extraction agent. From the passages of one document, extract what bears on the question, quoting evidence verbatim. ${SUMMARY_INSTRUCTIONS}`,
      },
      { role: 'user', content: 'Question: What changed?\n\nDocument "doc-1":\n\nFirst part.\n\nSecond part.' },
    ]);
  });

  it('marks a document cut to its most relevant passages, as today', () => {
    const relevant = 'The warranty period is 24 months.';
    const filler = Array.from({ length: 30 }, (_, i) => `Unrelated paragraph ${i} ${'x'.repeat(1_000)}.`);
    const input = { question: 'What is the warranty period?', documents: [{ id: 'contract', text: [...filler, relevant].join('\n\n') }] };
    const { messages } = renderMessages(callStep('extract'), { input, item: input.documents[0] });
    expect(messages[1]!.content.startsWith('Question: What is the warranty period?\n\nDocument "contract" (most relevant passages):\n\n')).toBe(true);
    expect(messages[1]!.content).toContain(relevant);
    expect(messages[1]!.content.length).toBeLessThan(24_000 + 200);
  });

  it('renders the synthesize prompt of today, with the documents without findings named', () => {
    const summaries = {
      extract: [
        { taskId: 't1', status: 'success', key: 'doc-1', output: { conclusion: 'It grew.', evidence: ['"up 5%"'], confidence: 0.8, document_id: 'doc-1' } },
        { taskId: 't2', status: 'success', key: 'doc-2', output: { conclusion: 'Unclear.', evidence: [], confidence: null, document_id: 'doc-2' } },
        { taskId: 't3', status: 'failed', key: 'doc-3', output: null },
      ],
    };
    const { messages, warnings } = renderMessages(callStep('synthesize'), { input: { question: 'What changed?' }, summaries });
    expect(warnings).toEqual([]);
    expect(messages).toEqual([
      {
        role: 'system',
        content: `You are a synthesis agent. Combine the per-document findings into one answer to the question; cite document ids in the evidence; lower the confidence where documents disagree or are missing. ${SUMMARY_INSTRUCTIONS}`,
      },
      {
        role: 'user',
        content:
          'Question: What changed?\n\nFindings:\nDocument "doc-1" (confidence 0.80): It grew.\n  - "up 5%"\nDocument "doc-2" (confidence unknown): Unclear.\n\nNo findings for: doc-3',
      },
    ]);
  });

  it('copies the document id into each extract output', () => {
    const extract = docReview.agentsByRole.get('extract')!;
    const item = { id: 'doc-7', text: 't' };
    expect(itemKeyOf(extract, item)).toBe('doc-7');
    expect(withItemKey(extract, { conclusion: 'c', evidence: [], confidence: 0.5 }, item)).toEqual({ conclusion: 'c', evidence: [], confidence: 0.5, document_id: 'doc-7' });
  });

  it('builds the result of today: synthesis, documents with ids, and missing only when some are', () => {
    const synthesis = { conclusion: 'Both grew.', evidence: ['doc-1'], confidence: 0.7 };
    const extract = [
      { taskId: 't1', status: 'success', key: 'doc-1', output: { conclusion: 'c1', evidence: ['e'], confidence: 0.9, document_id: 'doc-1' } },
      { taskId: 't2', status: 'dead', key: 'doc-2', output: null },
    ];
    const result = buildJobResult(docReview, { extract, synthesize: [{ taskId: 's', status: 'success', output: synthesis }] });
    expect(result).toEqual({
      synthesis,
      documents: [{ conclusion: 'c1', evidence: ['e'], confidence: 0.9, document_id: 'doc-1', task_id: 't1' }],
      missing: [{ document_id: 'doc-2', task_id: 't2', status: 'dead' }],
    });
    expect(JSON.stringify(Object.keys((result as { documents: object[] }).documents[0]!))).toBe('["conclusion","evidence","confidence","document_id","task_id"]');
    const complete = buildJobResult(docReview, { extract: [extract[0]!], synthesize: [{ taskId: 's', status: 'success', output: synthesis }] });
    expect(complete).not.toHaveProperty('missing');
  });

  describe('input: accepts and refuses what the doc_review submission schema does', () => {
    const documents = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `d${i}`, text: `text ${i}` }));
    const cases: Array<[string, unknown, string[]]> = [
      ['a valid input', { question: 'q', documents: documents(2) }, []],
      ['50 documents', { question: 'q', documents: documents(50) }, []],
      ['no question', { documents: documents(1) }, ['input.question']],
      ['an empty question', { question: '', documents: documents(1) }, ['input.question']],
      ['documents not a list', { question: 'q', documents: 'x' }, ['input.documents']],
      ['no documents', { question: 'q', documents: [] }, ['input.documents']],
      ['51 documents', { question: 'q', documents: documents(51) }, ['input.documents']],
      ['a duplicate id', { question: 'q', documents: [{ id: 'a', text: 't' }, { id: 'a', text: 'u' }] }, ['input.documents.1.id']],
      ['an unknown document field', { question: 'q', documents: [{ id: 'a', text: 't', url: 'x' }] }, ['input.documents.0']],
      ['an empty text and a missing id', { question: 'q', documents: [{ id: 'a', text: '' }, { text: 't' }] }, ['input.documents.0.text', 'input.documents.1.id']],
      ['an unknown top-level field', { question: 'q', documents: documents(1), extra: 1 }, ['input']],
    ];
    it.each(cases)('%s', (_name, input, paths) => {
      const checked = validateInput(docReview, input);
      expect(checked.ok ? [] : checked.issues.map((i) => i.path)).toEqual(paths);
    });

    it('names the duplicate id in the message', () => {
      const checked = validateInput(docReview, { question: 'q', documents: [{ id: 'a', text: 't' }, { id: 'a', text: 'u' }] });
      expect(checked).toEqual({ ok: false, issues: [{ path: 'input.documents.1.id', message: 'duplicate id "a"' }] });
    });
  });
});
