import { z } from 'zod';

type JsonSchemaInput = Parameters<typeof z.fromJSONSchema>[0];
type SchemaObject = { [key: string]: unknown };

const compiled = new WeakMap<object, z.ZodType>();

/**
 * zod's validator for a JSON Schema (a workflow's input or output, a gateway client's
 * `json_schema`), made once per schema object; throws when zod cannot read the schema.
 *
 * zod's `fromJSONSchema` enforces `required` only for names that `properties` declares:
 * `{type: object, required: [id, text]}` accepted `{}`. Such a name is declared first, with the
 * schema JSON Schema gives it there (`additionalProperties`, or anything), so it is required.
 */
export function zodFromJsonSchema(schema: object): z.ZodType {
  let validator = compiled.get(schema);
  if (validator === undefined) {
    validator = z.fromJSONSchema(declareRequiredProperties(schema) as JsonSchemaInput) as z.ZodType;
    compiled.set(schema, validator);
  }
  return validator;
}

/** Keywords whose value is one subschema, a list of them, or a map of names to them. */
const ONE_SUBSCHEMA = ['items', 'additionalProperties', 'additionalItems', 'contains', 'not', 'if', 'then', 'else', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties'];
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

/** A copy of `schema` in which every object schema declares each name it requires. */
export function declareRequiredProperties(schema: unknown): unknown {
  if (!isSchemaObject(schema)) return schema;
  const out: SchemaObject = { ...schema };
  for (const key of ONE_SUBSCHEMA) if (isSchemaObject(out[key])) out[key] = declareRequiredProperties(out[key]);
  for (const key of SUBSCHEMA_LISTS) if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map(declareRequiredProperties);
  for (const key of SUBSCHEMA_MAPS) {
    const map = out[key];
    if (isSchemaObject(map)) out[key] = Object.fromEntries(Object.entries(map).map(([name, sub]) => [name, declareRequiredProperties(sub)]));
  }
  if (Array.isArray(out.required)) {
    const declared: SchemaObject = isSchemaObject(out.properties) ? { ...out.properties } : {};
    const undeclared = out.required.filter((name): name is string => typeof name === 'string' && !(name in declared));
    if (undeclared.length > 0) {
      for (const name of undeclared) declared[name] = undeclaredPropertySchema(out, name);
      out.properties = declared;
    }
  }
  return out;
}

/** What JSON Schema checks a property against when `properties` does not list it. */
function undeclaredPropertySchema(schema: SchemaObject, name: string): unknown {
  if (isSchemaObject(schema.patternProperties)) {
    for (const [pattern, sub] of Object.entries(schema.patternProperties)) {
      if (matches(pattern, name)) return sub;
    }
  }
  const extra = schema.additionalProperties;
  return extra === false ? { not: {} } : isSchemaObject(extra) ? extra : {};
}

function matches(pattern: string, name: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(name);
  } catch {
    return false;
  }
}

function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
