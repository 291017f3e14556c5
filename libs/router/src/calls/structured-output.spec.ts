import { jsonSchemaProblem, matchesJsonSchema } from './structured-output';

describe('structured output checks (response_format json_schema)', () => {
  const schema = { type: 'object', required: ['answer', 'sources'], properties: { answer: { type: 'string' } } };

  it('a reply is JSON that the schema accepts, every required name present (declared in properties or not)', () => {
    expect(matchesJsonSchema('{"answer":"42","sources":[]}', schema)).toBe(true);
    expect(matchesJsonSchema('```json\n{"answer":"42","sources":["a"]}\n```', schema)).toBe(true);
    expect(matchesJsonSchema('{"answer":"42"}', schema)).toBe(false);
    expect(matchesJsonSchema('{"answer":42,"sources":[]}', schema)).toBe(false);
    expect(matchesJsonSchema('not json', schema)).toBe(false);
  });

  it('without a schema any JSON will do; a schema zod cannot read is named', () => {
    expect(matchesJsonSchema('[1,2]', undefined)).toBe(true);
    expect(jsonSchemaProblem('a string')).toBe('must be a JSON Schema object');
    expect(jsonSchemaProblem(schema)).toBeNull();
  });
});
