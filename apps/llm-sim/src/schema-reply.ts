import { synthesizeSummary } from './reply-synthesis';

/** The part of a JSON Schema the simulator reads to shape a structured-output reply. */
interface SchemaNode {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
  minItems?: number;
  minimum?: number;
  maximum?: number;
}

/** `response_format: {type: 'json_schema', json_schema: {schema}}` → the schema, or undefined. */
export function requestedSchema(responseFormat: unknown): SchemaNode | undefined {
  if (typeof responseFormat !== 'object' || responseFormat === null) return undefined;
  const format = responseFormat as { type?: unknown; json_schema?: { schema?: unknown } };
  if (format.type !== 'json_schema') return undefined;
  const schema = format.json_schema?.schema;
  return typeof schema === 'object' && schema !== null ? (schema as SchemaNode) : undefined;
}

/**
 * A value matching `schema`, as a model honouring structured output would give: every required
 * property, the first enum value, strings drawn from the prompt, numbers in range. Summary-shaped
 * fields (conclusion, evidence, confidence) get the simulator's usual summary, so the answers
 * read the same as the JSON-mode ones.
 */
export function valueForSchema(schema: SchemaNode, targetName: string, userText: string, name = ''): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const summary = synthesizeSummary(targetName, userText);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type ?? (schema.properties ? 'object' : 'string')) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? Object.keys(schema.properties ?? {})) {
        out[key] = valueForSchema(schema.properties?.[key] ?? {}, targetName, userText, key);
      }
      return out;
    }
    case 'array': {
      if (name === 'evidence') return summary.evidence;
      const count = Math.max(1, schema.minItems ?? 1);
      return Array.from({ length: count }, () => valueForSchema(schema.items ?? {}, targetName, userText));
    }
    case 'number':
    case 'integer': {
      const value = name === 'confidence' ? summary.confidence : (schema.minimum ?? 1);
      const bounded = Math.min(schema.maximum ?? value, Math.max(schema.minimum ?? value, value));
      return type === 'integer' ? Math.round(bounded) : bounded;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return summary.conclusion;
  }
}

export function schemaContent(schema: SchemaNode, targetName: string, userText: string): string {
  return JSON.stringify(valueForSchema(schema, targetName, userText));
}
