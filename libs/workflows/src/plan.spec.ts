import { planInstructions, planResponseFormat, validatePlan } from './plan';

const goal = { maxSubtasks: 3, roles: ['researcher', 'writer'] };
const subtask = (id: string, role: string, ...dependsOn: string[]) => ({ id, role, instruction: `do ${id}`, depends_on: dependsOn });

describe('planResponseFormat', () => {
  it('is the switchyard_plan strict json_schema with the allowed roles', () => {
    expect(planResponseFormat(goal)).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'switchyard_plan',
        strict: true,
        schema: {
          type: 'object',
          additionalProperties: false,
          required: ['subtasks'],
          properties: {
            subtasks: {
              type: 'array',
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['id', 'role', 'instruction', 'depends_on'],
                properties: {
                  id: { type: 'string' },
                  role: { type: 'string', enum: ['researcher', 'writer'] },
                  instruction: { type: 'string' },
                  depends_on: { type: 'array', items: { type: 'string' } },
                },
              },
            },
          },
        },
      },
    });
    expect(planInstructions(goal)).toContain('"researcher", "writer"');
    expect(planInstructions(goal)).toContain('1 to 3 subtasks');
  });
});

describe('validatePlan', () => {
  it('accepts a valid plan and gives its dependency order', () => {
    const checked = validatePlan({ subtasks: [subtask('draft', 'writer', 'facts', 'more'), subtask('facts', 'researcher'), subtask('more', 'researcher', 'facts')] }, goal);
    expect(checked).toEqual({
      ok: true,
      plan: {
        subtasks: [subtask('draft', 'writer', 'facts', 'more'), subtask('facts', 'researcher'), subtask('more', 'researcher', 'facts')],
        order: ['facts', 'more', 'draft'],
        levels: [['facts'], ['more'], ['draft']],
      },
    });
  });

  it('reads a reply given as text, in a Markdown fence', () => {
    const checked = validatePlan('Here is the plan:\n```json\n{"subtasks": [{"id": "a", "role": "writer", "instruction": "x", "depends_on": []}]}\n```', goal);
    expect(checked.ok).toBe(true);
  });

  const refused: Array<[string, unknown, string[]]> = [
    ['not JSON', 'I cannot plan this', ['the reply is not a JSON object']],
    ['no subtasks list', { steps: [] }, ['subtasks: expected an array']],
    ['an empty plan', { subtasks: [] }, ['subtasks: the plan has no subtasks']],
    ['too many subtasks', { subtasks: [subtask('a', 'writer'), subtask('b', 'writer'), subtask('c', 'writer'), subtask('d', 'writer')] }, ['subtasks: 4 subtasks, at most 3 allowed']],
    ['an unknown role', { subtasks: [subtask('a', 'hacker')] }, ['subtasks[0].role: unknown role "hacker" (allowed: researcher, writer)']],
    ['a duplicate id', { subtasks: [subtask('a', 'writer'), subtask('a', 'researcher')] }, ['subtask id "a" is used more than once']],
    ['a dangling depends_on', { subtasks: [subtask('a', 'writer', 'b')] }, ['subtask "a" depends on "b", which is not in the plan']],
    ['a self dependency', { subtasks: [subtask('a', 'writer', 'a')] }, ['subtask "a" depends on itself']],
    ['a cycle', { subtasks: [subtask('a', 'writer', 'c'), subtask('b', 'writer', 'a'), subtask('c', 'writer', 'b')] }, ['dependency cycle: a → c → b → a']],
    [
      'badly typed fields',
      { subtasks: [{ id: '', role: 3, instruction: ' ', depends_on: 'a', extra: true }] },
      [
        'subtasks[0]: unknown field: extra',
        'subtasks[0].id: expected a non-empty string',
        'subtasks[0].role: expected a string',
        'subtasks[0].instruction: expected a non-empty string',
        'subtasks[0].depends_on: expected an array of subtask ids',
      ],
    ],
  ];
  it.each(refused)('refuses %s with the reason', (_name, raw, reasons) => {
    expect(validatePlan(raw, goal)).toEqual({ ok: false, reasons });
  });
});
