import { compileWorkflow } from './compile-workflow';
import { itemKeyOf, itemsOf, unknownTypeMessage, validateInput, withItemKey } from './input';

const workflow = compileWorkflow(
  {
    type: 'nested',
    input: {
      type: 'object',
      required: ['incident'],
      properties: {
        incident: {
          type: 'object',
          required: ['traces'],
          properties: {
            traces: {
              type: 'array',
              'x-unique-by': 'span',
              items: { type: 'object', required: ['span'], properties: { span: { type: 'number' }, label: { type: 'string', enum: ['db', 'http'] } } },
            },
          },
        },
      },
    },
    agents: [{ role: 'reader', for_each: 'input.incident.traces', key: { from: 'span', as: 'span_id' }, prompt: { user: 'Span {{item.span}} {{item.label}}' } }],
  },
  'nested.ts',
);
const reader = workflow.agentsByRole.get('reader')!;

describe('validateInput', () => {
  it('names every failing path, nested unique keys included', () => {
    const checked = validateInput(workflow, { incident: { traces: [{ span: 1, label: 'dns' }, { span: 1 }, { label: 'db' }] } });
    expect(checked.ok ? [] : checked.issues).toEqual([
      { path: 'input.incident.traces.0.label', message: 'Invalid option: expected one of "db"|"http"' },
      { path: 'input.incident.traces.2.span', message: 'Invalid input: expected number, received undefined' },
      { path: 'input.incident.traces.1.span', message: 'duplicate span 1' },
    ]);
  });

  it('requires a name that `required` lists and `properties` does not declare (SPEC §6’s own incident_review input)', () => {
    const incident = compileWorkflow(
      {
        type: 'incident',
        input: { type: 'object', required: ['logs'], properties: { logs: { type: 'array', minItems: 1, items: { type: 'object', required: ['id', 'text'] } } } },
        agents: [{ role: 'reader', for_each: 'input.logs', prompt: { user: '{{item.text}}' } }],
      },
      'incident.ts',
    );
    const checked = validateInput(incident, { logs: [{ id: 'a' }, {}, { id: 'c', text: 'ok' }] });
    expect(checked.ok ? [] : checked.issues).toEqual([
      { path: 'input.logs.0.text', message: 'required' },
      { path: 'input.logs.1.id', message: 'required' },
      { path: 'input.logs.1.text', message: 'required' },
    ]);
    expect(validateInput(incident, { logs: [{ id: 'a', text: 'disk full', host: 'db-1' }] }).ok).toBe(true);
  });

  it('names the input itself when it is not an object', () => {
    const checked = validateInput(workflow, null);
    expect(checked.ok ? [] : checked.issues.map((i) => i.path)).toEqual(['input']);
  });
});

describe('for_each items', () => {
  it('reads the items of a nested input array and keys them', () => {
    const input = { incident: { traces: [{ span: 7 }, { span: 8 }] } };
    expect(itemsOf(reader, input)).toEqual([{ span: 7 }, { span: 8 }]);
    expect(itemsOf(reader, { incident: {} })).toEqual([]);
    expect(itemKeyOf(reader, { span: 7 })).toBe('7');
    expect(withItemKey(reader, { conclusion: 'c' }, { span: 7 })).toEqual({ conclusion: 'c', span_id: '7' });
    expect(withItemKey(reader, 'not an object', { span: 7 })).toBe('not an object');
  });
});

describe('unknownTypeMessage', () => {
  it('lists the known types', () => {
    expect(unknownTypeMessage('doc_reveiw', ['research_report', 'doc_review', 'goal'])).toBe('unknown job type "doc_reveiw" (known: doc_review, goal, research_report)');
  });
});
