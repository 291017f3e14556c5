import { RequestMetaSchema, type RequestMetaInput } from '@switchyard/contracts';
import { compileCondition, conditionMatches } from './rule-matcher';

const meta = (input: RequestMetaInput) => RequestMetaSchema.parse(input);

describe('conditionMatches', () => {
  it('matches a catch-all against anything', () => {
    expect(conditionMatches(compileCondition({ all_else: true }), meta({}))).toBe(true);
  });

  it('requires every key to match', () => {
    const condition = compileCondition({ task_type: ['reasoning'], complexity: ['high'] });
    expect(conditionMatches(condition, meta({ task_type: 'reasoning', complexity: 'high' }))).toBe(true);
    expect(conditionMatches(condition, meta({ task_type: 'reasoning', complexity: 'medium' }))).toBe(false);
    expect(conditionMatches(condition, meta({ task_type: 'extract', complexity: 'high' }))).toBe(false);
  });

  it('treats a list as "any of"', () => {
    const condition = compileCondition({ task_type: ['reasoning', 'plan'], sensitivity: ['public', 'internal'] });
    expect(conditionMatches(condition, meta({ task_type: 'plan', sensitivity: 'public' }))).toBe(true);
    expect(conditionMatches(condition, meta({ task_type: 'reasoning', sensitivity: 'internal' }))).toBe(true);
    expect(conditionMatches(condition, meta({ task_type: 'reasoning', sensitivity: 'sensitive' }))).toBe(false);
  });

  it('requires every listed tag', () => {
    const condition = compileCondition({ tags: ['vip', 'legal'] });
    expect(conditionMatches(condition, meta({ tags: ['legal', 'x', 'vip'] }))).toBe(true);
    expect(conditionMatches(condition, meta({ tags: ['vip'] }))).toBe(false);
    expect(conditionMatches(condition, meta({}))).toBe(false);
  });

  it('matches business_type and priority', () => {
    const condition = compileCondition({ business_type: ['billing', 'legal'], priority: ['high'] });
    expect(conditionMatches(condition, meta({ business_type: 'legal', priority: 'high' }))).toBe(true);
    expect(conditionMatches(condition, meta({ business_type: 'legal' }))).toBe(false);
    expect(conditionMatches(condition, meta({ priority: 'high' }))).toBe(false);
  });
});
