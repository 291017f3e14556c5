import { z } from 'zod';

type JsonSchemaInput = Parameters<typeof z.fromJSONSchema>[0];

const compiled = new WeakMap<object, z.ZodType>();

function validatorFor(schema: Record<string, unknown>): z.ZodType {
  let validator = compiled.get(schema);
  if (validator === undefined) {
    validator = z.fromJSONSchema(schema as JsonSchemaInput) as z.ZodType;
    compiled.set(schema, validator);
  }
  return validator;
}

/** Why `schema` cannot be used to check a reply (it is not a JSON Schema we can read), or null. */
export function jsonSchemaProblem(schema: unknown): string | null {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'must be a JSON Schema object';
  try {
    validatorFor(schema as Record<string, unknown>);
    return null;
  } catch (error) {
    return `not a usable JSON Schema: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * Whether a reply asked for with `response_format: json_schema` is JSON that the schema
 * accepts (a fenced ```json block counts). No schema: any JSON value will do.
 */
export function matchesJsonSchema(content: string, schema: Record<string, unknown> | undefined): boolean {
  let text = content.trim();
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(text);
  if (fenced) text = fenced[1]!;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  if (schema === undefined) return true;
  return validatorFor(schema).safeParse(value).success;
}
