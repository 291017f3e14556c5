import { z } from 'zod';
import { RouteRecordSchema, TASK_STATUSES } from '@switchyard/contracts';

/**
 * What the routes answer, as zod schemas for the OpenAPI document. Requests are described by
 * the schemas that validate them (see route-catalog.ts); answers are built by presenters, so
 * these mirror the presenters' types and are checked against real answers in the e2e specs.
 */
export const ApiErrorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  })
  ;

/** The gateway's errors have OpenAI's shape. */
export const OpenAiErrorSchema = z
  .object({ error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }) })
  ;

const status = z.enum(TASK_STATUSES);
const TenantErrorSchema = z.object({ code: z.string(), message: z.string() });

export const TaskResponseSchema = z
  .object({
    task_id: z.uuid(),
    parent_task_id: z.uuid().nullable(),
    agent_id: z.string(),
    role: z.string(),
    status,
    optional: z.boolean(),
    depends_on: z.array(z.uuid()),
    current_step: z.number().int(),
    total_steps: z.number().int(),
    retry_count: z.number().int(),
    route_targets: z.array(RouteRecordSchema),
    output_summary: z.unknown(),
    error: TenantErrorSchema.optional(),
    cost_usd: z.number(),
    updated_at: z.iso.datetime(),
  })
  ;

const jobHeader = {
  job_id: z.uuid(),
  type: z.string(),
  status,
  queue_position: z.number().int().min(1).optional(),
  degraded: z.object({ reason: z.string(), since: z.string() }).loose().optional(),
  progress: z.object({ completed: z.number().int(), total: z.number().int() }),
  error: TenantErrorSchema.optional(),
  cost: z.object({ usd: z.number() }).optional(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
};

export const JobListItemSchema = z.object(jobHeader);
export const JobResponseSchema = z.object({ ...jobHeader, result: z.unknown().optional(), tasks: z.array(TaskResponseSchema) });
export const JobListSchema = z.object({ jobs: z.array(JobListItemSchema), next_cursor: z.string().nullable() });
export const JobAcceptedSchema = z.object({ job_id: z.uuid(), status });

export const WorkflowListSchema = z.object({
  workflows: z.array(
    z.object({
      type: z.string(),
      description: z.string().optional(),
      input_schema: z.record(z.string(), z.unknown()),
      roles: z.array(z.object({ role: z.string(), after: z.array(z.string()), optional: z.boolean(), for_each: z.string().optional() })),
    }),
  ),
});

const AdminAttemptSchema = z.object({
  step: z.number().int().nullable(),
  at: z.iso.datetime(),
  target: z.string(),
  target_type: z.string(),
  model: z.string(),
  rule: z.string(),
  outcome: z.string(),
  error_class: z.string().nullable(),
  latency_ms: z.number(),
  cost_usd: z.number(),
  trace_id: z.string().nullable(),
});

export const AdminJobSchema = z
  .object({
    ...jobHeader,
    tenant_id: z.string(),
    trace_ids: z.array(z.string()),
    duration_ms: z.number().nullable(),
    result: z.unknown().optional(),
    tasks: z.array(
      TaskResponseSchema.extend({
        steps: z.array(z.object({ step: z.number().int(), name: z.string(), completed_at: z.string() })),
        attempts: z.array(AdminAttemptSchema),
        started_at: z.iso.datetime().nullable(),
        finished_at: z.iso.datetime().nullable(),
        duration_ms: z.number().nullable(),
      }),
    ),
  })
  ;
export const AdminJobListSchema = z.object({ jobs: z.array(JobListItemSchema.extend({ tenant_id: z.string() })), next_cursor: z.string().nullable() });

const percentiles = z.object({ p50: z.number().nullable(), p95: z.number().nullable() });
export const TargetSnapshotSchema = z
  .object({
    name: z.string(),
    type: z.enum(['local', 'cloud']),
    model: z.string(),
    endpoint: z.string(),
    state: z.string(),
    breaker: z.enum(['closed', 'open', 'half_open']),
    score: z.number(),
    share: z.number(),
    inFlight: z.number().int(),
    maxConcurrency: z.number().int(),
    latencyMs: percentiles,
    firstTokenMs: percentiles.extend({ mean5m: z.number().nullable() }),
    errorRate: z.number(),
    requests: z.number().int(),
    drained: z.boolean(),
    forcedPrimary: z.boolean(),
    weights: z.array(z.object({ rule: z.string(), configured: z.number(), current: z.number(), changedAt: z.number().nullable() })),
    canary: z
      .object({
        failing: z.boolean(),
        failingRounds: z.number().int(),
        checkedAt: z.number().nullable(),
        passed: z.number().int(),
        failures: z.array(z.object({ case: z.string(), language: z.string(), expected: z.string(), excerpt: z.string() })),
        errors: z.array(z.object({ case: z.string(), language: z.string(), error: z.string() })),
      })
      .nullable(),
  })
  ;
export const TargetsSchema = z.object({
  targets: z.array(TargetSnapshotSchema.extend({ fleet: z.unknown() })),
  fleet: z.object({ self: z.string(), processes: z.array(z.object({ processId: z.string(), role: z.string(), ageMs: z.number() })) }).nullable(),
  fleetError: z.string().optional(),
});
export const ExplanationSchema = z.object({
  rule: z.string().optional(),
  policy: z.string().optional(),
  matchedRules: z.array(z.string()).optional(),
  chosen: z.string().nullable(),
  split: z
    .object({ rule: z.string(), sticky: z.boolean(), targets: z.array(z.object({ target: z.string(), weight: z.number(), share: z.number(), eligible: z.boolean(), reason: z.string().optional() })) })
    .optional(),
  candidates: z.array(z.object({ target: z.string(), rule: z.string(), eligible: z.boolean(), reason: z.string().optional(), score: z.number().optional() })),
  error: z.string().optional(),
});
export const ForcedPrimarySchema = z.object({ forced_primary: z.string().nullable(), note: z.string() });

export const AdminTasksSchema = z.object({
  stale_after_ms: z.number().int(),
  tasks: z.array(
    z.object({
      task_id: z.uuid(),
      job_id: z.uuid(),
      tenant_id: z.string(),
      role: z.string(),
      agent_id: z.string(),
      status,
      stale: z.boolean(),
      lease_owner: z.string().nullable(),
      lease_version: z.number().int(),
      retry_count: z.number().int(),
      current_step: z.number().int(),
      total_steps: z.number().int(),
      queue_job_id: z.string(),
      last_heartbeat: z.iso.datetime(),
      error: z.string().nullable(),
    }),
  ),
});
export const QueuesSchema = z.object({ queues: z.array(z.object({ queue: z.string(), counts: z.record(z.string(), z.number().int()) })) });

const costTotals = {
  calls: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cost_usd: z.number(),
  errors: z.number().int(),
  latency_p50_ms: z.number().nullable(),
  latency_p95_ms: z.number().nullable(),
};
export const CostReportSchema = z.object({
  group_by: z.string(),
  since: z.iso.datetime(),
  until: z.iso.datetime(),
  tenant: z.string().nullable(),
  groups: z.array(z.object({ key: z.string().nullable(), ...costTotals })),
  totals: z.object(costTotals),
});
export const CostSeriesSchema = z.object({
  by: z.enum(['target', 'tenant']),
  since: z.iso.datetime(),
  until: z.iso.datetime(),
  bucket_seconds: z.number().int(),
  points: z.array(
    z.object({ bucket: z.iso.datetime(), key: z.string(), target_type: z.string().nullable(), calls: z.number().int(), errors: z.number().int(), cost_usd: z.number() }),
  ),
});

export const HealthSchema = z.object({ status: z.literal('ok') });
export const ReadinessSchema = z.object({
  status: z.enum(['ready', 'not_ready']),
  checks: z.array(z.object({ name: z.string(), ok: z.boolean(), error: z.string().optional() }).loose()),
});
export const ModelListSchema = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() })),
});
export const ChatCompletionSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion'),
    model: z.string(),
    choices: z.array(z.object({ index: z.number().int(), message: z.object({ role: z.string(), content: z.string().nullable() }).loose(), finish_reason: z.string().nullable() })),
    usage: z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() }).optional(),
  })
  .loose();
