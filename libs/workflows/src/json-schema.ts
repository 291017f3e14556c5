import type { z } from 'zod';
import { formatIssuePath, zodFromJsonSchema, type FieldIssue } from '@switchyard/contracts';

/** A JSON Schema document as written in a workflow (the subset zod's `fromJSONSchema` reads). */
export type JsonSchema = { [key: string]: unknown };

/**
 * Our one extension to JSON Schema: on an array of objects, `x-unique-by: id` requires the
 * items' `id` values to be distinct (JSON Schema's `uniqueItems` compares whole items).
 */
export const UNIQUE_BY_KEYWORD = 'x-unique-by';

export type SchemaCheck<T> = { ok: true; value: T } | { ok: false; issues: FieldIssue[] };

/** Why a schema cannot be used, or null when it converts. */
export function jsonSchemaProblem(schema: JsonSchema): string | null {
  try {
    zodFromJsonSchema(schema);
    return null;
  } catch (error) {
    return `not a usable JSON Schema: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Validates `value` against `schema`; every failing path is reported, prefixed (`input.documents.0.text`). */
export function validateAgainstSchema(schema: JsonSchema, value: unknown, prefix?: string): SchemaCheck<unknown> {
  const result = zodFromJsonSchema(schema).safeParse(value);
  const issues: FieldIssue[] = result.success
    ? []
    : result.error.issues.map((issue) => ({
        path: formatIssuePath(issue.path, prefix),
        message: messageOf(issue),
      }));
  issues.push(...uniqueByIssues(schema, value, [], prefix));
  return issues.length === 0 ? { ok: true, value: result.success ? result.data : value } : { ok: false, issues };
}

function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`;
  // A required name the schema declares with no type of its own.
  if (issue.code === 'invalid_type' && issue.expected === 'nonoptional') return 'required';
  return issue.message;
}

function uniqueByIssues(schema: JsonSchema, value: unknown, path: PropertyKey[], prefix?: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (Array.isArray(value)) {
    const field = schema[UNIQUE_BY_KEYWORD];
    if (typeof field === 'string') {
      const seen = new Set<string>();
      value.forEach((item, index) => {
        if (!isRecord(item) || !(field in item)) return;
        const key = JSON.stringify(item[field]);
        if (seen.has(key)) issues.push({ path: formatIssuePath([...path, index, field], prefix), message: `duplicate ${field} ${key}` });
        seen.add(key);
      });
    }
    const items = schema.items;
    if (isRecord(items)) value.forEach((item, index) => issues.push(...uniqueByIssues(items, item, [...path, index], prefix)));
  } else if (isRecord(value) && isRecord(schema.properties)) {
    for (const [name, sub] of Object.entries(schema.properties)) {
      if (isRecord(sub) && name in value) issues.push(...uniqueByIssues(sub, value[name], [...path, name], prefix));
    }
  }
  return issues;
}

/**
 * Follows a property path (`documents.0.text`) through a schema's `properties` / `items`.
 * Returns the sub-schema, `undefined` where the schema says nothing (no `properties` to
 * check against), or an error naming the first segment the schema does not declare.
 */
export function schemaAt(schema: JsonSchema, segments: readonly string[]): { schema?: JsonSchema; error?: string } {
  let current: JsonSchema = schema;
  for (const [index, segment] of segments.entries()) {
    if (isRecord(current.properties)) {
      const next = current.properties[segment];
      if (!isRecord(next)) return { error: `"${segments.slice(0, index + 1).join('.')}" is not declared in the schema` };
      current = next;
    } else if (isRecord(current.items) && /^\d+$/.test(segment)) {
      current = current.items;
    } else {
      return {};
    }
  }
  return { schema: current };
}

/**
 * Strict structured outputs (`strict: true`) need every property required and no extra
 * properties; a workflow's output schema is held to that at load time.
 */
export function strictOutputProblems(schema: JsonSchema, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (isRecord(schema.properties)) {
    const required = Array.isArray(schema.required) ? schema.required : [];
    for (const name of Object.keys(schema.properties)) {
      if (!required.includes(name)) issues.push({ path: `${path}.required`, message: `"${name}" must be required: strict structured output requires every property` });
    }
    if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
      issues.push({ path: `${path}.additionalProperties`, message: 'must be false (or left out) for strict structured output' });
    }
    for (const [name, sub] of Object.entries(schema.properties)) {
      if (isRecord(sub)) issues.push(...strictOutputProblems(sub, `${path}.properties.${name}`));
    }
  }
  if (isRecord(schema.items)) issues.push(...strictOutputProblems(schema.items, `${path}.items`));
  return issues;
}

/** The schema as strict structured output wants it: `additionalProperties: false` on every object. */
export function toStrictSchema(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  delete out[UNIQUE_BY_KEYWORD];
  if (isRecord(schema.properties)) {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, isRecord(v) ? toStrictSchema(v) : v]));
    out.additionalProperties = false;
  }
  if (isRecord(schema.items)) out.items = toStrictSchema(schema.items);
  return out;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
