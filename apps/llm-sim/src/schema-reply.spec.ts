import { requestedSchema, schemaContent, valueForSchema } from './schema-reply';

const triage = {
  type: 'object',
  additionalProperties: false,
  required: ['severity', 'category', 'rationale', 'count', 'tags', 'confidence'],
  properties: {
    severity: { type: 'string', enum: ['low', 'medium', 'high'] },
    category: { type: 'string' },
    rationale: { type: 'string' },
    count: { type: 'integer', minimum: 2 },
    tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
  },
};

describe('schema-driven replies (response_format json_schema)', () => {
  it('reads the schema out of a json_schema response_format only', () => {
    expect(requestedSchema({ type: 'json_schema', json_schema: { name: 'x', strict: true, schema: triage } })).toBe(triage);
    expect(requestedSchema({ type: 'json_object' })).toBeUndefined();
    expect(requestedSchema(undefined)).toBeUndefined();
  });

  it('gives every required property a value of its type, the first enum value, numbers in range', () => {
    const value = valueForSchema(triage, 'local_vllm_7b', 'Checkout is down. Errors spike.') as Record<string, unknown>;
    expect(Object.keys(value).sort()).toEqual(['category', 'confidence', 'count', 'rationale', 'severity', 'tags']);
    expect(value.severity).toBe('low');
    expect(value.rationale).toContain('[local_vllm_7b]');
    expect(value.count).toBe(2);
    expect(value.tags).toHaveLength(2);
    expect(value.confidence).toBe(0.8);
  });

  it('answers nested objects and arrays of objects as JSON text', () => {
    const schema = { type: 'object', required: ['steps'], properties: { steps: { type: 'array', items: { type: 'object', required: ['done'], properties: { done: { type: 'boolean' } } } } } };
    expect(JSON.parse(schemaContent(schema, 'cloud_main', 'x'))).toEqual({ steps: [{ done: true }] });
  });
});
