import { formatSummaries, parseTemplate, referencesOf, renderTemplate, type CompiledTemplate } from './template';

function compile(source: string): CompiledTemplate {
  const { template, errors } = parseTemplate(source);
  expect(errors).toEqual([]);
  return template;
}

describe('parseTemplate', () => {
  it('reads every kind of reference and filter arguments', () => {
    const template = compile('{{input.a.b}} {{item.id}} {{outputs.triage.severity}} {{summaries.x}} {{task.instruction}} {{steps.draft.conclusion}} {{dependencies}} {{subtasks}} {{item.text | passages(input.q, 100)}}');
    expect(referencesOf(template).map((r) => r.reference)).toEqual([
      { kind: 'input', path: ['a', 'b'] },
      { kind: 'item', path: ['id'] },
      { kind: 'outputs', role: 'triage', path: ['severity'] },
      { kind: 'summaries', role: 'x' },
      { kind: 'task', path: ['instruction'] },
      { kind: 'steps', step: 'draft', path: ['conclusion'] },
      { kind: 'dependencies' },
      { kind: 'subtasks' },
      { kind: 'item', path: ['text'] },
      { kind: 'input', path: ['q'] },
    ]);
  });

  it('reports each malformed placeholder', () => {
    expect(parseTemplate('{{}} {{input..x}} {{task.id}} {{summaries.a.b}} {{input.x | json(1)}} {{input.x | passages(1)}}').errors).toEqual([
      '{{}}: empty placeholder',
      '{{input..x}}: cannot read "input..x" as a reference (names joined by dots)',
      '{{task.id}}: unknown variable "task.id" (task has only task.instruction)',
      '{{summaries.a.b}}: summaries takes exactly a role: summaries.ROLE',
      '{{input.x | json(1)}}: filter "json" takes 0 arguments, got 1',
      '{{input.x | passages(1)}}: filter "passages" takes 2 arguments, got 1',
    ]);
  });
});

describe('renderTemplate', () => {
  it('fills strings as they are and other values as compact JSON', () => {
    const template = compile('{{input.name}} has {{input.count}} items: {{input.tags}}; {{input.flag}} {{input.name | json}}');
    expect(renderTemplate(template, { input: { name: 'Ada', count: 3, tags: ['a', 'b'], flag: false } })).toEqual({
      text: 'Ada has 3 items: ["a","b"]; false "Ada"',
      warnings: [],
    });
  });

  it('renders a missing value as empty text with a warning instead of failing', () => {
    const template = compile('[{{input.missing}}] [{{outputs.triage.severity}}] [{{item.id}}]');
    expect(renderTemplate(template, { input: {} })).toEqual({
      text: '[] [] []',
      warnings: ['{{input.missing}}: no value', '{{outputs.triage.severity}}: no value', '{{item.id}}: no value'],
    });
  });

  it('renders null as empty text without a warning (an optional field left empty)', () => {
    expect(renderTemplate(compile('[{{input.x}}]'), { input: { x: null } })).toEqual({ text: '[]', warnings: [] });
  });

  it('reads the instruction, earlier steps, dependencies and subtasks', () => {
    const done = { taskId: 't', status: 'success', key: 's1', output: { conclusion: 'found', evidence: [], confidence: 1 } };
    const template = compile('{{task.instruction}} | {{steps.draft.conclusion}} | {{dependencies}} | {{subtasks}}');
    const rendered = renderTemplate(template, {
      input: {},
      task: { instruction: 'Compare prices' },
      steps: { draft: { conclusion: 'v1' } },
      dependencies: [done],
      subtasks: [],
    });
    expect(rendered.text).toBe('Compare prices | v1 | Subtask "s1" (confidence 1.00): found | ');
  });

  it('applies passages and passages_note to the item text', () => {
    const template = compile('{{item.text | passages_note(input.q, 30)}}:{{item.text | passages(input.q, 30)}}');
    const short = renderTemplate(template, { input: { q: 'cats' }, item: { text: 'One.\n\nTwo.' } });
    expect(short.text).toBe(':One.\n\nTwo.');
    const long = renderTemplate(template, { input: { q: 'cats' }, item: { text: `${'dogs bark loudly. '.repeat(3)}\n\nCats purr.` } });
    expect(long.text).toBe(' (most relevant passages):Cats purr.');
  });

  it('takes string literals as filter arguments', () => {
    const template = compile(`{{item.text | passages('cats', 12)}}`);
    expect(renderTemplate(template, { input: {}, item: { text: 'Dogs bark.\n\nCats purr.' } }).text).toBe('Cats purr.');
  });
});

describe('formatSummaries', () => {
  const summary = (conclusion: string, confidence: number | null, evidence: string[] = []) => ({ conclusion, evidence, confidence });

  it('labels keyed tasks by their key, lists evidence, and names the tasks without findings at the end', () => {
    const text = formatSummaries(
      [
        { taskId: '1', status: 'success', key: 'a', output: summary('A holds.', 0.5, ['line 1', 'line 2']) },
        { taskId: '2', status: 'failed', key: 'b', output: null },
        { taskId: '3', status: 'success', key: 'c', output: summary('C holds.', null) },
      ],
      'Log',
      true,
    );
    expect(text).toBe('Log "a" (confidence 0.50): A holds.\n  - line 1\n  - line 2\nLog "c" (confidence unknown): C holds.\n\nNo findings for: b');
  });

  it('numbers unkeyed per-item tasks, names a single task by its role, and shows other outputs as JSON', () => {
    expect(formatSummaries([{ taskId: '1', status: 'success', output: summary('x', 1) }, { taskId: '2', status: 'success', output: { severity: 'high' } }], 'reader', true)).toBe(
      'reader #1 (confidence 1.00): x\nreader #2: {"severity":"high"}',
    );
    expect(formatSummaries([{ taskId: '1', status: 'skipped', output: null }], 'historian', false)).toBe('\n\nNo findings for: historian');
  });
});
