import { PlanFaults, invalidPlanFor, planFor, requestedPlanRoles } from './plan-reply';

const planFormat = (roles: string[]) => ({
  type: 'json_schema',
  json_schema: {
    name: 'switchyard_plan',
    strict: true,
    schema: { type: 'object', properties: { subtasks: { type: 'array', items: { type: 'object', properties: { role: { type: 'string', enum: roles } } } } } },
  },
});

describe('planner replies (switchyard_plan)', () => {
  it('recognises a switchyard_plan request and reads its allowed roles', () => {
    expect(requestedPlanRoles(planFormat(['researcher', 'writer']))).toEqual(['researcher', 'writer']);
    expect(requestedPlanRoles({ type: 'json_schema', json_schema: { name: 'other', schema: {} } })).toBeUndefined();
    expect(requestedPlanRoles({ type: 'json_object' })).toBeUndefined();
  });

  it('plans three subtasks on the allowed roles whose depends_on name earlier subtasks only', () => {
    const { subtasks } = planFor(['researcher', 'analyst', 'writer'], 'Compare two databases');
    expect(subtasks.map((s) => [s.id, s.role, s.depends_on])).toEqual([
      ['gather', 'researcher', []],
      ['analyse', 'analyst', ['gather']],
      ['write', 'writer', ['gather', 'analyse']],
    ]);
    expect(subtasks[0]!.instruction).toContain('Compare two databases');
    expect(planFor(['solo'], 'x').subtasks.every((s) => s.role === 'solo')).toBe(true);
  });

  it('an invalid plan has a dependency cycle', () => {
    const { subtasks } = invalidPlanFor(['researcher']);
    expect(subtasks.map((s) => [s.id, s.depends_on])).toEqual([
      ['a', ['b']],
      ['b', ['a']],
    ]);
  });

  it('plan faults count down across takers', () => {
    const faults = new PlanFaults();
    expect(faults.takeInvalid()).toBe(false);
    faults.set(2);
    expect([faults.takeInvalid(), faults.takeInvalid(), faults.takeInvalid()]).toEqual([true, true, false]);
    expect(faults.snapshot()).toEqual({ invalid_next: 0 });
  });
});
