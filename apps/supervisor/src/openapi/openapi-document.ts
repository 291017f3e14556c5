import { z } from 'zod';
import type { RouteResponse, RouteSpec } from './route-catalog';

type JsonSchema = Record<string, unknown>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  components: { securitySchemes: Record<string, unknown> };
  tags: Array<{ name: string }>;
  paths: Record<string, Record<string, unknown>>;
}

/** Requests are described as the validator reads them (`io: input`), answers as they are written. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** `/v1/jobs/:id` → `/v1/jobs/{id}` */
export function openApiPath(nestPath: string): string {
  return nestPath.replace(/:([A-Za-z_]\w*)/g, '{$1}');
}

function parameters(where: 'path' | 'query' | 'header', schema: z.ZodObject | undefined): unknown[] {
  if (!schema) return [];
  const object = jsonSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || (object.required ?? []).includes(name),
    schema: property,
  }));
}

function response({ description, schema, contentType }: RouteResponse): unknown {
  if (schema) return { description, content: { [contentType ?? 'application/json']: { schema: jsonSchema(schema, 'output') } } };
  return { description, ...(contentType ? { content: { [contentType]: { schema: { type: 'string' } } } } : {}) };
}

const SECURITY = { api_key: [{ apiKey: [] }], admin_token: [{ adminToken: [] }], none: [] } as const;

/** The OpenAPI 3.1 document of the given routes, with every schema generated from zod. */
export function buildOpenApiDocument(routes: readonly RouteSpec[], version: string): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    const operation = {
      operationId: `${route.method}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_, next: string | undefined) => (next ?? '').toUpperCase())}`,
      summary: route.summary,
      tags: [route.tag],
      security: SECURITY[route.auth],
      parameters: [...parameters('path', route.params), ...parameters('query', route.query), ...parameters('header', route.headers)],
      ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } } } : {}),
      responses: Object.fromEntries(Object.entries(route.responses).map(([status, r]) => [status, response(r)])),
    };
    paths[path] = { ...paths[path], [route.method]: operation };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchyard',
      version,
      description: 'Durable multi-agent jobs and a hybrid local/cloud LLM router. Tenant routes take `Authorization: Bearer <API key>`; admin routes `Authorization: Bearer <ADMIN_TOKEN>`.',
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'a tenant API key (API_KEYS)' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'the operator token (ADMIN_TOKEN)' },
      },
    },
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
  };
}

/** A loaded job type as the document describes it: its name and the JSON Schema of its input. */
export interface WorkflowInputDescription {
  type: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/**
 * The document with `POST /v1/jobs`'s body narrowed to the loaded workflows: one alternative
 * per job type, its `type` fixed and its `input` the workflow's own schema. Pure: the
 * document given is not changed.
 */
export function withWorkflowSubmissions(document: OpenApiDocument, path: string, workflows: readonly WorkflowInputDescription[]): OpenApiDocument {
  const operation = document.paths[path]?.post as { requestBody?: { content: { 'application/json': { schema: JsonSchema } } } } | undefined;
  const envelope = operation?.requestBody?.content['application/json'].schema;
  if (operation === undefined || envelope === undefined || workflows.length === 0) return document;
  const properties = (envelope.properties ?? {}) as Record<string, JsonSchema>;
  const alternatives = workflows.map((workflow) => ({
    ...envelope,
    ...(workflow.description ? { description: workflow.description } : {}),
    properties: { ...properties, type: { type: 'string', const: workflow.type }, input: workflow.inputSchema },
    required: [...new Set([...((envelope.required as string[] | undefined) ?? []), 'type', 'input'])],
  }));
  const post = { ...operation, requestBody: { ...operation.requestBody, content: { 'application/json': { schema: { oneOf: alternatives } } } } };
  return { ...document, paths: { ...document.paths, [path]: { ...document.paths[path], post } } };
}
