import { join } from 'node:path';
import { ValidationError, type FieldIssue } from '@switchyard/contracts';
import { loadWorkflowsDir } from '@switchyard/workflows';
import { parseWorkflowSubmission } from './workflow-planner';

const MAX_DOCUMENTS_PER_JOB = 50;
const { workflows } = loadWorkflowsDir(join(__dirname, '../../../../config/workflows'));
const parseJobSubmission = (body: unknown) => parseWorkflowSubmission(body, workflows).submission;

function validBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'doc_review',
    input: {
      question: 'Which supplier is cheapest?',
      documents: [
        { id: 'a', text: 'Supplier A charges 10.' },
        { id: 'b', text: 'Supplier B charges 12.' },
      ],
    },
    ...overrides,
  };
}

function issuesOf(body: unknown): FieldIssue[] {
  try {
    parseJobSubmission(body);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues;
  }
  throw new Error('expected parseJobSubmission to throw');
}

function paths(body: unknown): string[] {
  return issuesOf(body).map((issue) => issue.path);
}

describe('parseWorkflowSubmission (doc_review from its workflow file)', () => {
  it('accepts a valid doc_review submission', () => {
    const parsed = parseJobSubmission(
      validBody({ meta: { sensitivity: 'sensitive', priority: 'high', business_type: 'procurement', tags: ['q3'] } }),
    );
    expect(parsed).toEqual({
      type: 'doc_review',
      input: {
        question: 'Which supplier is cheapest?',
        documents: [
          { id: 'a', text: 'Supplier A charges 10.' },
          { id: 'b', text: 'Supplier B charges 12.' },
        ],
      },
      meta: { sensitivity: 'sensitive', priority: 'high', business_type: 'procurement', tags: ['q3'] },
    });
  });

  it('fills in the meta defaults when meta is absent', () => {
    expect(parseJobSubmission(validBody()).meta).toEqual({ sensitivity: 'internal', priority: 'normal', tags: [] });
  });

  it('fills in the meta defaults for the fields a partial meta leaves out', () => {
    expect(parseJobSubmission(validBody({ meta: { priority: 'high' } })).meta).toEqual({
      sensitivity: 'internal',
      priority: 'high',
      tags: [],
    });
  });

  it('accepts exactly the maximum number of documents', () => {
    const documents = Array.from({ length: MAX_DOCUMENTS_PER_JOB }, (_, i) => ({ id: `d${i}`, text: `text ${i}` }));
    expect((parseJobSubmission(validBody({ input: { question: 'q', documents } })).input as { documents: unknown[] }).documents).toHaveLength(50);
  });

  it('names input.question when the question is missing', () => {
    expect(paths(validBody({ input: { documents: [{ id: 'a', text: 't' }] } }))).toEqual(['input.question']);
  });

  it('names input.documents when documents has the wrong type', () => {
    expect(paths(validBody({ input: { question: 'q', documents: 'not a list' } }))).toEqual(['input.documents']);
  });

  it('names input.documents when documents is empty', () => {
    const issues = issuesOf(validBody({ input: { question: 'q', documents: [] } }));
    expect(issues).toEqual([{ path: 'input.documents', message: expect.stringMatching(/>=1 items/) }]);
  });

  it('names input.documents when there are 51 documents', () => {
    const documents = Array.from({ length: MAX_DOCUMENTS_PER_JOB + 1 }, (_, i) => ({ id: `d${i}`, text: `text ${i}` }));
    const issues = issuesOf(validBody({ input: { question: 'q', documents } }));
    expect(issues).toEqual([{ path: 'input.documents', message: expect.stringMatching(/<=50 items/) }]);
  });

  it('names the second document id when two documents share an id', () => {
    const issues = issuesOf(
      validBody({
        input: {
          question: 'q',
          documents: [
            { id: 'same', text: 'one' },
            { id: 'same', text: 'two' },
          ],
        },
      }),
    );
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toBe('input.documents.1.id');
    expect(issues[0]!.message).toContain('duplicate id "same"');
  });

  it('names type for an unknown job type, listing the known ones', () => {
    const issues = issuesOf(validBody({ type: 'translate' }));
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toBe('type');
    expect(issues[0]!.message).toContain('unknown job type "translate"');
    expect(issues[0]!.message).toContain('doc_review');
  });

  it('does not treat inherited object keys as job types', () => {
    expect(paths(validBody({ type: 'toString' }))).toEqual(['type']);
    expect(paths(validBody({ type: '__proto__' }))).toEqual(['type']);
  });

  it('names meta.sensitivity for a bad sensitivity', () => {
    expect(paths(validBody({ meta: { sensitivity: 'secret' } }))).toEqual(['meta.sensitivity']);
  });

  it('reports an unknown top-level field by name', () => {
    const issues = issuesOf(validBody({ callback: 'http://x' }));
    expect(issues).toEqual([{ path: '(root)', message: 'unknown field: callback' }]);
  });

  it('carries callback_url (SPEC §6; its scheme and address are checked by the supervisor)', () => {
    expect(parseJobSubmission(validBody({ callback_url: 'https://hooks.example.com/x' })).callback_url).toBe('https://hooks.example.com/x');
    expect(parseJobSubmission(validBody()).callback_url).toBeUndefined();
    expect(paths(validBody({ callback_url: 42 }))).toEqual(['callback_url']);
  });

  it('reports an unknown field inside a document with the document path', () => {
    const issues = issuesOf(
      validBody({ input: { question: 'q', documents: [{ id: 'a', text: 't' }, { id: 'b', text: 't', url: 'x' }] } }),
    );
    expect(issues).toEqual([{ path: 'input.documents.1', message: 'unknown field: url' }]);
  });

  it('reports every bad field of the input at once', () => {
    const issues = issuesOf(validBody({ input: { question: '', documents: [{ id: '', text: 'x' }] } }));
    expect(issues.map((i) => i.path).sort()).toEqual(['input.documents.0.id', 'input.question']);
  });

  it('names input when the input is missing altogether', () => {
    expect(paths({ type: 'doc_review' })).toEqual(['input']);
  });

  it('rejects a body that is not an object', () => {
    expect(paths(null)).toEqual(['(root)']);
    expect(paths('doc_review')).toEqual(['(root)']);
  });

  it('puts every issue in the error message', () => {
    try {
      parseJobSubmission(validBody({ input: { documents: [] } }));
      throw new Error('expected a ValidationError');
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      const message = (error as ValidationError).message;
      expect(message).toContain('input.question');
      expect(message).toContain('input.documents');
    }
  });

  it.each([
    ['a NUL', 'hello\u0000world'],
    ['a lone high surrogate', 'q\ud800'],
    ['a lone low surrogate', 'b\udc00'],
  ])('refuses %s in any string, naming the field', (_, bad) => {
    const expected = [{ path: expect.any(String), message: 'must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate' }];
    expect(issuesOf(validBody({ input: { question: 'q', documents: [{ id: 'a', text: bad }] } }))).toEqual([{ ...expected[0], path: 'input.documents.0.text' }]);
    expect(paths(validBody({ input: { question: bad, documents: [{ id: 'a', text: 't' }] } }))).toEqual(['input.question']);
    expect(paths(validBody({ input: { question: 'q', documents: [{ id: bad, text: 't' }] } }))).toEqual(['input.documents.0.id']);
    expect(paths(validBody({ meta: { business_type: bad } }))).toEqual(['meta.business_type']);
    expect(paths(validBody({ meta: { tags: ['ok', bad] } }))).toEqual(['meta.tags.1']);
    expect(paths(validBody({ type: bad }))).toEqual(['type']);
  });

  it('keeps well-formed text outside the BMP (surrogate pairs)', () => {
    expect((parseJobSubmission(validBody({ input: { question: 'ok 😀 𝄞', documents: [{ id: '😀', text: '𝄞' }] } })).input as { question: string }).question).toBe('ok 😀 𝄞');
  });

  it('never repeats more than a short fragment of a huge unknown type or key', () => {
    const huge = 'x'.repeat(1_000_000);
    const issues = [...issuesOf(validBody({ type: huge })), ...issuesOf(validBody({ [huge]: 1 })), ...issuesOf({ type: huge.slice(0, 60), input: {} })];
    expect(issues.length).toBeGreaterThan(0);
    for (const issue of issues) expect(issue.path.length + issue.message.length).toBeLessThan(300);
  });
});

