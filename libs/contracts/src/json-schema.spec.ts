import { declareRequiredProperties, zodFromJsonSchema } from './json-schema';

const accepts = (schema: object, value: unknown) => zodFromJsonSchema(schema).safeParse(value).success;

describe('zodFromJsonSchema', () => {
  it('requires every name in `required`, declared in `properties` or not', () => {
    const schema = { type: 'object', required: ['id', 'text'], properties: { id: { type: 'string' } } };
    expect(accepts(schema, { id: 'a', text: 'x' })).toBe(true);
    expect(accepts(schema, { id: 'a' })).toBe(false);
    expect(accepts({ type: 'object', required: ['id'] }, {})).toBe(false);
    expect(accepts({ type: 'object', required: ['id'] }, { id: null, other: 1 })).toBe(true);
  });

  it('holds an undeclared required name to what JSON Schema checks it against', () => {
    // additionalProperties as a schema
    const typed = { type: 'object', required: ['n'], additionalProperties: { type: 'number' } };
    expect(accepts(typed, { n: 1 })).toBe(true);
    expect(accepts(typed, { n: 'one' })).toBe(false);
    // a patternProperties match wins over additionalProperties
    const patterned = { type: 'object', required: ['x_id'], patternProperties: { '^x_': { type: 'string' } }, additionalProperties: false };
    expect(accepts(patterned, { x_id: 'a' })).toBe(true);
    expect(accepts(patterned, { x_id: 1 })).toBe(false);
    // additionalProperties false: required and never allowed, so nothing passes (as in JSON Schema)
    expect(accepts({ type: 'object', required: ['ghost'], additionalProperties: false }, { ghost: 1 })).toBe(false);
  });

  it('reaches required names in nested schemas: items, prefixItems, anyOf, properties, $defs', () => {
    const schema = {
      type: 'object',
      properties: {
        logs: { type: 'array', items: { type: 'object', required: ['text'] } },
        pair: { type: 'array', prefixItems: [{ type: 'object', required: ['a'] }] },
        either: { anyOf: [{ type: 'object', required: ['b'] }, { type: 'string' }] },
        ref: { $ref: '#/$defs/named' },
      },
      $defs: { named: { type: 'object', required: ['name'] } },
    };
    expect(accepts(schema, { logs: [{ text: 't' }], pair: [{ a: 1 }], either: { b: 1 }, ref: { name: 'n' } })).toBe(true);
    expect(accepts(schema, { logs: [{}] })).toBe(false);
    expect(accepts(schema, { pair: [{}] })).toBe(false);
    expect(accepts(schema, { either: {} })).toBe(false);
    expect(accepts(schema, { ref: {} })).toBe(false);
  });

  it('leaves the caller’s schema as it was', () => {
    const schema = { type: 'object', required: ['id'] };
    zodFromJsonSchema(schema);
    expect(schema).toEqual({ type: 'object', required: ['id'] });
    expect(declareRequiredProperties(schema)).toEqual({ type: 'object', required: ['id'], properties: { id: {} } });
  });
});
