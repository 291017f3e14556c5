import { z } from 'zod';
import { JobSubmissionEnvelopeSchema } from '@switchyard/contracts';
import { AdminJobListQuerySchema } from '../admin/admin-jobs.query';
import { ExplainSchema, ForcePrimarySchema, ReadOnlySchema } from '../admin/targets.controller';
import { AdminTasksQuerySchema } from '../admin/tasks.query';
import { CostReportQuerySchema } from '../costs/cost-report.query';
import { CostSeriesQuerySchema } from '../costs/cost-series.query';
import { ChatCompletionRequestSchema } from '../gateway/chat-completion.schema';
import { JobListQuerySchema } from '../jobs/job-list.query';
import * as out from './response.schemas';

export type HttpMethod = 'get' | 'post';
export type RouteAuth = 'api_key' | 'admin_token' | 'none';

export interface RouteResponse {
  description: string;
  /** JSON body; omitted for bodies described by `contentType` alone. */
  schema?: z.ZodType;
  contentType?: string;
}

export interface RouteSpec {
  method: HttpMethod;
  /** As Nest declares it (`/v1/jobs/:id`); the document writes `{id}`. */
  path: string;
  summary: string;
  tag: 'jobs' | 'gateway' | 'admin' | 'operations';
  auth: RouteAuth;
  /**
   * Not a Nest controller's: `static`, a fastify plugin (the dashboard's files); `http`, the HTTP
   * server itself, below fastify (the chat completions route).
   */
  servedBy?: 'static' | 'http';
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  body?: z.ZodType;
  responses: Record<number, RouteResponse>;
}

const JobIdParams = z.object({ id: z.uuid() });
const TargetParams = z.object({ name: z.string().min(1) });
const IdempotencyHeaders = z.object({ 'idempotency-key': z.string().regex(/^[\x21-\x7e]{1,255}$/).optional() });

/**
 * `POST /v1/jobs`: the envelope `parseJobSubmission` validates. The job types and their input
 * schemas come from the workflow files, so the served document puts one alternative per loaded
 * workflow in its place (`withWorkflowSubmissions`).
 */
export const JOB_SUBMISSION_PATH = '/v1/jobs';
const JobSubmissionSchema = JobSubmissionEnvelopeSchema;

const error = (description: string): RouteResponse => ({ description, schema: out.ApiErrorSchema });
const gatewayError = (description: string): RouteResponse => ({ description, schema: out.OpenAiErrorSchema });
const json = (description: string, schema: z.ZodType): RouteResponse => ({ description, schema });

const tenantErrors = {
  400: error('the request is malformed: each field at fault is named in `issues`'),
  401: error('missing or unknown API key'),
  503: error('Postgres cannot be reached (`database_unavailable`, with Retry-After)'),
};
const adminErrors = {
  400: error('a parameter is malformed'),
  401: error('missing or wrong admin token'),
  403: error('the admin API is disabled (ADMIN_TOKEN is not set)'),
};

/**
 * Every HTTP route of the supervisor with the schemas of what it takes and answers. The
 * OpenAPI document is generated from this list, and a test fails when a Nest route is
 * missing here (or listed here but gone), so a new route cannot ship without its schema.
 */
export const ROUTES: readonly RouteSpec[] = [
  {
    method: 'post',
    path: JOB_SUBMISSION_PATH,
    summary: 'Submit a job',
    tag: 'jobs',
    auth: 'api_key',
    headers: IdempotencyHeaders,
    body: JobSubmissionSchema,
    responses: {
      202: json('accepted: the job is in Postgres', out.JobAcceptedSchema),
      ...tenantErrors,
      409: error('`idempotency_conflict`: this Idempotency-Key was used with another body'),
      415: error('the body is not JSON'),
    },
  },
  {
    method: 'get',
    path: '/v1/jobs',
    summary: "List the tenant's jobs, newest first",
    tag: 'jobs',
    auth: 'api_key',
    query: JobListQuerySchema,
    responses: { 200: json('a page of jobs', out.JobListSchema), ...tenantErrors },
  },
  {
    method: 'get',
    path: '/v1/jobs/:id',
    summary: 'Read a job with its task tree',
    tag: 'jobs',
    auth: 'api_key',
    params: JobIdParams,
    responses: { 200: json('the job', out.JobResponseSchema), ...tenantErrors, 404: error("no such job (or another tenant's)") },
  },
  {
    method: 'get',
    path: '/v1/workflows',
    summary: 'The job types a tenant may submit, with their input schema and roles',
    tag: 'jobs',
    auth: 'api_key',
    responses: { 200: json('the loaded workflows', out.WorkflowListSchema), ...tenantErrors },
  },
  {
    method: 'get',
    path: '/v1/jobs/:id/events',
    summary: "Server-sent events of a job's changes until it ends",
    tag: 'jobs',
    auth: 'api_key',
    params: JobIdParams,
    responses: {
      200: {
        description: 'text/event-stream: an `event: job` with the job (as GET /v1/jobs/:id) on each change of status, queue position, progress or a task\'s status or step; `event: end` with the final job; `: ping` heartbeats',
        contentType: 'text/event-stream',
      },
      ...tenantErrors,
      404: error("no such job (or another tenant's)"),
    },
  },
  {
    method: 'post',
    path: '/v1/jobs/:id/cancel',
    summary: 'Cancel a job',
    tag: 'jobs',
    auth: 'api_key',
    params: JobIdParams,
    responses: {
      200: json('cancelled', out.JobAcceptedSchema),
      ...tenantErrors,
      404: error('no such job'),
      409: error('`job_finished`: the job already finished'),
    },
  },
  {
    method: 'post',
    path: '/v1/jobs/:id/retry',
    summary: "Run a failed or cancelled job's unfinished tasks again from their checkpoints; finished tasks are kept and not paid again",
    tag: 'jobs',
    auth: 'api_key',
    params: JobIdParams,
    responses: {
      202: json('`pending` when admitted again, `queued` while its tenant or the fleet is at its running limit', out.JobAcceptedSchema),
      ...tenantErrors,
      404: error("no such job (or another tenant's)"),
      409: error('`job_not_retryable`: the job is not failed or cancelled'),
    },
  },
  {
    method: 'post',
    path: '/v1/chat/completions',
    servedBy: 'http',
    summary: 'OpenAI-compatible chat completion, routed by `metadata` and the `model` alias; the whole chat surface passed through',
    tag: 'gateway',
    auth: 'api_key',
    headers: IdempotencyHeaders,
    body: ChatCompletionRequestSchema,
    responses: {
      200: { description: 'the completion (or, with `stream: true`, server-sent events); the target is in `x-switchyard-target`', schema: out.ChatCompletionSchema },
      400: gatewayError('the request is malformed'),
      401: gatewayError('missing or unknown API key'),
      404: gatewayError('`model_not_found`: `model` is neither `auto` nor an alias'),
      409: gatewayError('`idempotency_key_in_progress`'),
      429: gatewayError("`rate_limit_exceeded`: past the tenant's `gateway_rpm`, with Retry-After"),
      502: gatewayError('`upstream_failed`: every attempt failed'),
      503: gatewayError('`overloaded`, `no_eligible_target`, `read_only` (read-only mode and no cached answer), `idempotency_unavailable` or `session_unavailable`, with Retry-After'),
    },
  },
  {
    method: 'get',
    path: '/v1/models',
    summary: 'OpenAI model list: `auto` and every alias of `router.models`',
    tag: 'gateway',
    auth: 'api_key',
    responses: { 200: json('the models', out.ModelListSchema), 400: gatewayError('a malformed request (URL or headers)'), 401: gatewayError('missing or unknown API key') },
  },
  { method: 'get', path: '/healthz', summary: 'Liveness', tag: 'operations', auth: 'none', responses: { 200: json('alive', out.HealthSchema) } },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: Postgres, Redis and migrations',
    tag: 'operations',
    auth: 'none',
    responses: { 200: json('ready', out.ReadinessSchema), 503: json('not ready, with the failing checks', out.ReadinessSchema) },
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics',
    tag: 'operations',
    auth: 'none',
    responses: { 200: { description: 'Prometheus text exposition format', contentType: 'text/plain; version=0.0.4' } },
  },
  {
    method: 'get',
    path: '/openapi.json',
    summary: 'This document',
    tag: 'operations',
    auth: 'none',
    responses: { 200: { description: 'OpenAPI 3.1', contentType: 'application/json' } },
  },
  { method: 'get', path: '/docs', summary: 'This document, rendered', tag: 'operations', auth: 'none', responses: { 200: { description: 'HTML', contentType: 'text/html' } } },
  {
    method: 'get',
    path: '/ui/',
    summary: 'The operator dashboard (asks for the admin token)',
    tag: 'operations',
    auth: 'none',
    servedBy: 'static',
    responses: { 200: { description: 'HTML', contentType: 'text/html' }, 404: error('the dashboard is not built') },
  },
  { method: 'get', path: '/admin/targets', summary: 'Targets: health, breaker, share, latency, error rate, fleet view', tag: 'admin', auth: 'admin_token', responses: { 200: json('targets', out.TargetsSchema), ...adminErrors } },
  {
    method: 'post',
    path: '/admin/routing/explain',
    summary: 'Explain the routing decision for request meta',
    tag: 'admin',
    auth: 'admin_token',
    body: ExplainSchema,
    responses: { 200: json('the decision', out.ExplanationSchema), ...adminErrors },
  },
  {
    method: 'post',
    path: '/admin/targets/:name/drain',
    summary: 'Drain a target (fleet-wide)',
    tag: 'admin',
    auth: 'admin_token',
    params: TargetParams,
    responses: { 200: json('the target after the change', out.TargetSnapshotSchema), ...adminErrors, 404: error('no such target'), 503: error('`overrides_unavailable`: Redis did not answer') },
  },
  {
    method: 'post',
    path: '/admin/targets/:name/enable',
    summary: 'Enable a drained target (fleet-wide)',
    tag: 'admin',
    auth: 'admin_token',
    params: TargetParams,
    responses: { 200: json('the target after the change', out.TargetSnapshotSchema), ...adminErrors, 404: error('no such target'), 503: error('`overrides_unavailable`: Redis did not answer') },
  },
  {
    method: 'post',
    path: '/admin/routing/force-primary',
    summary: 'Force a primary target, or `null` to return to normal routing',
    tag: 'admin',
    auth: 'admin_token',
    body: ForcePrimarySchema,
    responses: { 200: json('the forced target', out.ForcedPrimarySchema), ...adminErrors, 404: error('no such target'), 503: error('`overrides_unavailable`: Redis did not answer') },
  },
  {
    method: 'post',
    path: '/admin/read-only',
    summary: 'Read-only mode on or off (fleet-wide): no model calls, cached gateway answers only, other gateway calls 503 `read_only`, durable tasks wait',
    tag: 'admin',
    auth: 'admin_token',
    body: ReadOnlySchema,
    responses: { 200: json('the mode now', out.ReadOnlyModeSchema), ...adminErrors, 503: error('`overrides_unavailable`: Redis did not answer') },
  },
  { method: 'get', path: '/admin/tasks', summary: 'Stale and resumed tasks, or tasks by status', tag: 'admin', auth: 'admin_token', query: AdminTasksQuerySchema, responses: { 200: json('tasks', out.AdminTasksSchema), ...adminErrors } },
  { method: 'get', path: '/admin/queues', summary: 'BullMQ counts per agent queue', tag: 'admin', auth: 'admin_token', responses: { 200: json('queues', out.QueuesSchema), ...adminErrors } },
  { method: 'get', path: '/admin/costs', summary: 'The cost ledger summed by a dimension', tag: 'admin', auth: 'admin_token', query: CostReportQuerySchema, responses: { 200: json('the report', out.CostReportSchema), ...adminErrors } },
  {
    method: 'get',
    path: '/admin/costs/series',
    summary: 'The cost ledger per time bucket and target or tenant',
    tag: 'admin',
    auth: 'admin_token',
    query: CostSeriesQuerySchema,
    responses: { 200: json('the series', out.CostSeriesSchema), ...adminErrors },
  },
  { method: 'get', path: '/admin/jobs', summary: "Every tenant's jobs, filtered by status, type and tenant", tag: 'admin', auth: 'admin_token', query: AdminJobListQuerySchema, responses: { 200: json('a page of jobs', out.AdminJobListSchema), ...adminErrors } },
  {
    method: 'get',
    path: '/admin/jobs/:id',
    summary: 'Any job with its task tree, steps, upstream attempts and trace ids',
    tag: 'admin',
    auth: 'admin_token',
    params: JobIdParams,
    responses: { 200: json('the job', out.AdminJobSchema), ...adminErrors, 404: error('no such job') },
  },
];
