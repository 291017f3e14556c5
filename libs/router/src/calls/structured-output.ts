import { zodFromJsonSchema } from '@switchyard/contracts';

/** Why `schema` cannot be used to check a reply (it is not a JSON Schema we can read), or null. */
export function jsonSchemaProblem(schema: unknown): string | null {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'must be a JSON Schema object';
  try {
    zodFromJsonSchema(schema);
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
  return zodFromJsonSchema(schema).safeParse(value).success;
}
