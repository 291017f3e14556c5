import { z } from 'zod';
import { jsonSchemaProblem } from '../calls/structured-output';
import {
  COMPLEXITIES,
  ComplexitySchema,
  PRIORITIES,
  PrioritySchema,
  SENSITIVITIES,
  SensitivitySchema,
  TASK_TYPES,
  TaskTypeSchema,
} from '@switchyard/contracts';

export const TARGET_TYPES = ['local', 'cloud'] as const;
export type TargetType = (typeof TARGET_TYPES)[number];

export const ROUTING_POLICIES = ['local_first', 'quality_first', 'latency_first'] as const;
export type RoutingPolicy = (typeof ROUTING_POLICIES)[number];

export const DEFAULT_QUALITY: Readonly<Record<TargetType, number>> = { local: 5, cloud: 8 };
export const DEFAULT_TIMEOUTS = {
  local_ms: 30_000,
  cloud_ms: 60_000,
  connect_ms: 3_000,
  first_token_local_ms: 15_000,
  first_token_cloud_ms: 30_000,
} as const;
/** A deliberately slow assumed generation speed, for the total-time budget before any is measured. */
export const DEFAULT_TOKENS_PER_SECOND = 20;
export const DEFAULT_MAX_ATTEMPTS_PER_CALL = 3;

/** Names show up in logs, metrics labels and headers, so they are kept plain. */
const nameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'letters, digits, "_", "." and "-", starting with a letter or digit, at most 64 characters');

const timeoutMsSchema = z.number().int().min(100).max(600_000);

const LANGUAGE_TAG = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
const LANGUAGE_TAG_HINT = 'a language tag such as "zh", "en" or "zh-Hans"';

const TargetSchema = z.strictObject({
  name: nameSchema,
  type: z.enum(TARGET_TYPES),
  endpoint: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. http://127.0.0.1:8000/v1' }),
  model: z.string().min(1),
  max_concurrency: z.number().int().min(1),
  context_window: z.number().int().min(1),
  cost_per_1k_tokens: z.strictObject({ input: z.number().min(0), output: z.number().min(0) }),
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'the name of an environment variable, not the key itself')
    .optional(),
  quality: z.number().int().min(1).max(10).optional(),
  timeout_ms: timeoutMsSchema.optional(),
  first_token_timeout_ms: timeoutMsSchema.optional(),
  rpm: z.number().int().min(1).optional(),
  tpm: z.number().int().min(1).optional(),
  tokens_per_second: z.number().positive().optional(),
  /** The languages this target serves: canary cases in other languages are not run on it (seed 004 §5.5). */
  languages: z.array(z.string().regex(LANGUAGE_TAG, LANGUAGE_TAG_HINT)).min(1).optional(),
});

const ms = (fallback: number) => z.number().int().min(0).max(86_400_000).default(fallback);
const count = (fallback: number) => z.number().int().min(1).max(1_000_000).default(fallback);

const HealthSchema = z
  .strictObject({
    threshold: z.number().min(0).max(100).default(30),
    retry_after_ms: ms(30_000),
    window_ms: ms(300_000),
    consecutive_failures_to_zero: count(3),
    class_thresholds: z
      .strictObject({ network: count(2), timeout: count(3), server: count(3), bad_output: count(5) })
      .default({ network: 2, timeout: 3, server: 3, bad_output: 5 }),
  })
  .prefault({});

const BreakerSchema = z
  .strictObject({
    consecutive_failures: count(10),
    consecutive_window_ms: ms(30_000),
    failure_rate: z.number().gt(0).lt(1).default(0.5),
    rate_window_ms: ms(60_000),
    min_volume: count(20),
    cooldown_ms: ms(30_000),
    half_open_probes: count(3),
  })
  .prefault({});

const RecoverySchema = z
  .strictObject({
    steps: z.array(z.number().gt(0).max(100)).min(1).default([10, 30, 60, 100]),
    hold_ms: ms(30_000),
    switch_cooldown_ms: ms(90_000),
    max_step_points: z.number().int().min(1).max(100).default(15),
  })
  .prefault({});

const OverloadSchema = z.strictObject({ first_token_ms: ms(800), queue: z.number().int().min(0).default(8) }).prefault({});

const BackoffSchema = z.strictObject({ base_ms: ms(1_000), max_ms: ms(8_000), jitter_ms: ms(500) }).prefault({});

const ProbesSchema = z
  .strictObject({ enabled: z.boolean().default(true), liveness_interval_ms: ms(10_000), inference_interval_ms: ms(30_000), timeout_ms: ms(5_000) })
  .prefault({});

const CacheSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** business_type → seconds; a business type not listed is not cached. `default` applies to the rest. */
    ttl_s: z.record(z.string().min(1).max(64), z.number().int().min(0)).default({}),
    idempotency_ttl_s: z.number().int().min(1).default(86_400),
  })
  .prefault({});

/**
 * The gateway's request queue: a call that finds every eligible target at its max_concurrency
 * waits (first come, first served) for a slot up to `queue_timeout_ms`; at most
 * `queue_capacity` calls wait; past either it gets a 503 with Retry-After.
 */
const GatewaySchema = z
  .strictObject({
    queue_capacity: z.number().int().min(0).max(100_000).default(500),
    queue_timeout_ms: ms(10_000),
    /** The most choices (`n`) one gateway request may ask for; more is a 400 naming `n`. */
    max_n: z.number().int().min(1).max(16).default(4),
  })
  .prefault({});

/**
 * A model alias (SPEC §4): the request meta a client gets by naming it in `model`, for clients
 * that can set `model` but no `metadata`. The body's `metadata` wins field by field.
 */
const ModelAliasSchema = z.strictObject({
  task_type: TaskTypeSchema.optional(),
  complexity: ComplexitySchema.optional(),
  sensitivity: SensitivitySchema.optional(),
  priority: PrioritySchema.optional(),
  tags: z.array(z.string().min(1).max(64)).max(32).optional(),
  business_type: z.string().min(1).max(64).optional(),
  model_preference: z.string().min(1).max(64).optional(),
  timeout_ms: z.number().int().min(100).max(600_000).optional(),
  max_output_tokens: z.number().int().min(1).optional(),
});

export type ModelAlias = z.output<typeof ModelAliasSchema>;

/** `auto` is the router's own choice; it cannot be redefined. */
export const AUTO_MODEL = 'auto';

/**
 * Fleet-wide limits (SPEC §4): a target's max_concurrency, rpm and tpm are counted in Redis
 * for every process together. A slot whose holder stops renewing it lapses after
 * `slot_ttl_ms`; a call that finds every candidate full fleet-wide waits up to
 * `slot_wait_ms` (polling every `slot_poll_ms`); a Redis round trip slower than
 * `redis_timeout_ms` falls back to this process's share of the limit.
 */
const FleetLimitsSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    slot_ttl_ms: z.number().int().min(500).max(600_000).default(5_000),
    slot_wait_ms: ms(10_000),
    slot_poll_ms: z.number().int().min(5).max(10_000).default(100),
    redis_timeout_ms: z.number().int().min(10).max(60_000).default(250),
    slot_linger_ms: z.number().int().min(0).max(10_000).default(25),
  })
  .prefault({});

/** One value or a non-empty list meaning "any of"; normalised to a list. */
function oneOrMany<T extends z.ZodType>(item: T, expected: string) {
  return z
    .union([item, z.array(item).min(1)], { error: `expected ${expected}, or a non-empty list of them` })
    .transform((value): z.output<T>[] => (Array.isArray(value) ? value : [value]));
}

const oneOf = (values: readonly string[]) => `one of ${values.join(', ')}`;

const WhenSchema = z
  .strictObject({
    task_type: oneOrMany(TaskTypeSchema, oneOf(TASK_TYPES)).optional(),
    complexity: oneOrMany(ComplexitySchema, oneOf(COMPLEXITIES)).optional(),
    sensitivity: oneOrMany(SensitivitySchema, oneOf(SENSITIVITIES)).optional(),
    priority: oneOrMany(PrioritySchema, oneOf(PRIORITIES)).optional(),
    business_type: oneOrMany(z.string().min(1).max(64), 'a label of 1 to 64 characters').optional(),
    tags: z.array(z.string().min(1).max(64)).min(1).optional(),
    all_else: z.literal(true, { error: 'only `all_else: true` is meaningful; remove the key otherwise' }).optional(),
  })
  .superRefine((when, ctx) => {
    const conditions = Object.keys(when).filter((key) => key !== 'all_else' && when[key as keyof typeof when] !== undefined);
    if (when.all_else && conditions.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['all_else'], message: `a catch-all cannot be combined with other conditions (${conditions.join(', ')})` });
    }
    if (!when.all_else && conditions.length === 0) {
      ctx.addIssue({ code: 'custom', message: 'names no condition; use `all_else: true` for a catch-all' });
    }
  });

/** One entry of a weighted split: `{name, weight}` (seed 003 §4.4). Weight 0 is a standby, tried only when every weighted target is out. */
const WeightedTargetSchema = z.strictObject({
  name: z.string().min(1),
  weight: z.number().min(0, 'a weight cannot be negative').max(1_000_000),
});

const targetName = (entry: string | { name: string }) => (typeof entry === 'string' ? entry : entry.name);

const RuleSchema = z
  .strictObject({
    name: nameSchema,
    when: WhenSchema,
    target: z.string().min(1).optional(),
    targets: z.array(z.union([z.string().min(1), WeightedTargetSchema], { error: 'expected a target name or {name, weight}' })).min(1).optional(),
    priority: z.number().int().default(0),
  })
  .superRefine((rule, ctx) => {
    if (rule.target !== undefined && rule.targets !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['targets'], message: 'give either `target` or `targets`, not both' });
    } else if (rule.target === undefined && rule.targets === undefined) {
      ctx.addIssue({ code: 'custom', path: ['target'], message: 'a rule needs `target` (one name) or `targets` (an ordered list)' });
    }
    const seen = new Set<string>();
    rule.targets?.forEach((entry, index) => {
      const name = targetName(entry);
      if (seen.has(name)) ctx.addIssue({ code: 'custom', path: ['targets', index], message: `target "${name}" is listed twice` });
      seen.add(name);
    });
    const weighted = rule.targets?.filter((entry) => typeof entry !== 'string') ?? [];
    if (weighted.length > 0 && weighted.length < (rule.targets?.length ?? 0)) {
      ctx.addIssue({ code: 'custom', path: ['targets'], message: 'give every target of a split a weight ({name, weight}), or none (an ordered list)' });
    } else if (weighted.length > 0 && weighted.every((entry) => entry.weight === 0)) {
      ctx.addIssue({ code: 'custom', path: ['targets'], message: 'every weight is 0: at least one target of a split needs a positive weight' });
    }
  });

/**
 * Dynamic weights (seed 004 §3.3): every `interval_s` each weighted split's weights move toward
 * a score of success rate, latency and cost, by at most `max_step_points` (points of the rule's
 * total) per move and at most once per `min_change_interval_s` per weight.
 */
const DynamicWeightsSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    interval_s: z.number().int().min(1).max(86_400).default(60),
    max_step_points: z.number().min(1).max(100).default(15),
    min_change_interval_s: z.number().int().min(0).max(86_400).default(300),
    /** Below this many calls in the passive window a target's score is unknown and its weight stays. */
    min_requests: z.number().int().min(1).max(1_000_000).default(20),
    /** Points a target loses for being slower / dearer than the best of its split (0 for the best, up to the figure). */
    latency_penalty: z.number().min(0).max(100).default(30),
    cost_penalty: z.number().min(0).max(100).default(20),
  })
  .prefault({});

const CanaryExpectSchema = z
  .strictObject({
    contains: oneOrManyText().optional(),
    regex: z.string().min(1).optional(),
    json_schema: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((expect, ctx) => {
    if (expect.contains === undefined && expect.regex === undefined && expect.json_schema === undefined) {
      ctx.addIssue({ code: 'custom', message: 'names no check; give `contains`, `regex` or `json_schema`' });
    }
    if (expect.regex !== undefined) {
      try {
        new RegExp(expect.regex, 'u');
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['regex'], message: `not a valid regular expression: ${error instanceof Error ? error.message : String(error)}` });
      }
    }
    if (expect.json_schema !== undefined) {
      const problem = jsonSchemaProblem(expect.json_schema);
      if (problem !== null) ctx.addIssue({ code: 'custom', path: ['json_schema'], message: problem });
    }
  });

function oneOrManyText() {
  return z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1)], { error: 'expected a text, or a non-empty list of texts that must all appear' })
    .transform((value) => (Array.isArray(value) ? value : [value]));
}

const CanaryCaseSchema = z.strictObject({
  name: nameSchema,
  language: z.string().regex(LANGUAGE_TAG, LANGUAGE_TAG_HINT),
  prompt: z.string().min(1).max(20_000),
  expect: CanaryExpectSchema,
});

/**
 * Business canary probes (seed 004 §4.1): real cases sent to every target every `interval_s`; a
 * target that answers but fails them `rounds_to_fail` rounds in a row loses its share like an
 * unhealthy one, and comes back through the recovery ramp after a passing round. The cases are
 * inline (`cases`) or in a YAML file `{cases: [...]}` (`cases_file`, relative to router.yaml).
 */
const CanariesSchema = z
  .strictObject({
    interval_s: z.number().int().min(1).max(86_400).default(300),
    timeout_ms: timeoutMsSchema.default(30_000),
    max_tokens: z.number().int().min(1).max(8_192).default(256),
    rounds_to_fail: z.number().int().min(1).max(100).default(2),
    cases_file: z.string().min(1).optional(),
    cases: z.array(CanaryCaseSchema).min(1, 'at least one canary case is required'),
  })
  .superRefine((canaries, ctx) => {
    const seen = new Set<string>();
    canaries.cases.forEach((testCase, index) => {
      if (seen.has(testCase.name)) ctx.addIssue({ code: 'custom', path: ['cases', index, 'name'], message: `duplicate canary case name "${testCase.name}"` });
      seen.add(testCase.name);
    });
  });

const RouterSectionSchema = z
  .strictObject({
    default_policy: z.enum(ROUTING_POLICIES).default('local_first'),
    fallback_to_any_eligible: z.boolean().default(true),
    timeouts: z
      .strictObject({
        local_ms: timeoutMsSchema.default(DEFAULT_TIMEOUTS.local_ms),
        cloud_ms: timeoutMsSchema.default(DEFAULT_TIMEOUTS.cloud_ms),
        connect_ms: timeoutMsSchema.default(DEFAULT_TIMEOUTS.connect_ms),
        first_token_local_ms: timeoutMsSchema.default(DEFAULT_TIMEOUTS.first_token_local_ms),
        first_token_cloud_ms: timeoutMsSchema.default(DEFAULT_TIMEOUTS.first_token_cloud_ms),
      })
      .prefault({}),
    max_attempts_per_call: z.number().int().min(1).max(10).default(DEFAULT_MAX_ATTEMPTS_PER_CALL),
    retry_budget_per_job: z.number().int().min(0).max(1000).default(12),
    retry_budget_per_task: z.number().min(0).max(100).default(1),
    context_max_share: z.number().gt(0).max(1).default(0.8),
    health: HealthSchema,
    breaker: BreakerSchema,
    recovery: RecoverySchema,
    overload: OverloadSchema,
    backoff: BackoffSchema,
    probes: ProbesSchema,
    // The gateway's response cache is not routing: it has its own top-level block now.
    cache: z.never({ error: 'moved: the gateway response cache is the top-level `response_cache` block, beside `router`' }).optional(),
    gateway: GatewaySchema,
    fleet_limits: FleetLimitsSchema,
    dynamic_weights: DynamicWeightsSchema,
    canaries: CanariesSchema.optional(),
    models: z
      .record(nameSchema, ModelAliasSchema)
      .default({})
      .refine((models) => !(AUTO_MODEL in models), { message: '"auto" is the router\'s own choice and cannot be an alias' }),
    targets: z.array(TargetSchema).min(1, 'at least one target is required'),
    routes: z.array(RuleSchema).min(1, 'at least one route is required'),
  })
  .superRefine((router, ctx) => {
    const targetNames = new Set<string>();
    router.targets.forEach((target, index) => {
      if (targetNames.has(target.name)) {
        ctx.addIssue({ code: 'custom', path: ['targets', index, 'name'], message: `duplicate target name "${target.name}"` });
      }
      targetNames.add(target.name);
    });
    const known = [...targetNames].join(', ');
    const ruleNames = new Set<string>();
    router.routes.forEach((rule, index) => {
      if (ruleNames.has(rule.name)) {
        ctx.addIssue({ code: 'custom', path: ['routes', index, 'name'], message: `duplicate route name "${rule.name}"` });
      }
      ruleNames.add(rule.name);
      if (rule.target !== undefined && !targetNames.has(rule.target)) {
        ctx.addIssue({ code: 'custom', path: ['routes', index, 'target'], message: `unknown target "${rule.target}"; known targets: ${known}` });
      }
      rule.targets?.forEach((entry, position) => {
        const name = targetName(entry);
        if (!targetNames.has(name)) {
          ctx.addIssue({
            code: 'custom',
            path: ['routes', index, 'targets', position, ...(typeof entry === 'string' ? [] : ['name'])],
            message: `unknown target "${name}"; known targets: ${known}`,
          });
        }
      });
    });
    if (!router.routes.some((rule) => rule.when.all_else)) {
      ctx.addIssue({ code: 'custom', path: ['routes'], message: 'no catch-all route; add one with `when: {all_else: true}`' });
    }
  })
  .transform((router): Omit<RouterConfig, 'cache'> => ({
    default_policy: router.default_policy,
    fallback_to_any_eligible: router.fallback_to_any_eligible,
    timeouts: router.timeouts,
    max_attempts_per_call: router.max_attempts_per_call,
    retry_budget_per_job: router.retry_budget_per_job,
    retry_budget_per_task: router.retry_budget_per_task,
    context_max_share: router.context_max_share,
    health: router.health,
    breaker: router.breaker,
    recovery: router.recovery,
    overload: router.overload,
    backoff: router.backoff,
    probes: router.probes,
    gateway: router.gateway,
    fleet_limits: router.fleet_limits,
    dynamic_weights: router.dynamic_weights,
    canaries: router.canaries ?? null,
    models: router.models,
    targets: router.targets.map((target) => {
      const local = target.type === 'local';
      const timeout_ms = target.timeout_ms ?? (local ? router.timeouts.local_ms : router.timeouts.cloud_ms);
      const firstToken = target.first_token_timeout_ms ?? (local ? router.timeouts.first_token_local_ms : router.timeouts.first_token_cloud_ms);
      return {
        ...target,
        quality: target.quality ?? DEFAULT_QUALITY[target.type],
        timeout_ms,
        first_token_timeout_ms: Math.min(firstToken, timeout_ms),
        tokens_per_second: target.tokens_per_second ?? DEFAULT_TOKENS_PER_SECOND,
      };
    }),
    routes: router.routes.map(({ target, targets, ...rule }) => {
      const weighted = targets !== undefined && targets.every((entry) => typeof entry !== 'string');
      return {
        ...rule,
        targets: targets?.map(targetName) ?? (target === undefined ? [] : [target]),
        ...(weighted ? { weights: targets.map((entry) => (entry as { weight: number }).weight) } : {}),
      };
    }),
  }));

/**
 * The file: `router` (routing) and `response_cache` (the gateway's response cache and
 * Idempotency-Key answers, all defaults when absent).
 */
export const RouterConfigFileSchema = z
  .strictObject({ router: RouterSectionSchema, response_cache: CacheSchema })
  .transform(({ router, response_cache }): { router: RouterConfig } => ({ router: { ...router, cache: response_cache } }));

export type RuleCondition = z.output<typeof WhenSchema>;

/** A target with every default resolved. */
export interface TargetConfig {
  name: string;
  type: TargetType;
  endpoint: string;
  model: string;
  max_concurrency: number;
  context_window: number;
  cost_per_1k_tokens: { input: number; output: number };
  api_key_env?: string;
  /** 1..10 capability hint used by quality_first ordering. */
  quality: number;
  /** Total time one upstream call to this target may take. */
  timeout_ms: number;
  /** Time from sending the request to the first streamed token. */
  first_token_timeout_ms: number;
  /** Requests / tokens per minute this target accepts; no limit when absent. */
  rpm?: number;
  tpm?: number;
  /** Assumed generation speed, for an attempt's total-time budget. */
  tokens_per_second: number;
  /** The languages it serves (canary cases in others are not run on it); all when absent. */
  languages?: string[];
}

/** A rule with `target`/`targets` normalised to an ordered list. */
export interface RuleConfig {
  name: string;
  when: RuleCondition;
  targets: string[];
  /** A weighted split: the weight of each of `targets`, in the same order. Absent: an ordered list. */
  weights?: number[];
  priority: number;
}

export type DynamicWeightsConfig = z.output<typeof DynamicWeightsSchema>;
export type CanariesConfig = z.output<typeof CanariesSchema>;
export type CanaryCase = z.output<typeof CanaryCaseSchema>;

export interface RouterConfig {
  default_policy: RoutingPolicy;
  fallback_to_any_eligible: boolean;
  timeouts: { local_ms: number; cloud_ms: number; connect_ms: number; first_token_local_ms: number; first_token_cloud_ms: number };
  max_attempts_per_call: number;
  /** Failed upstream attempts a job may make: this base… */
  retry_budget_per_job: number;
  /** …plus this share per task of the job (see `retryBudgetLimit`). */
  retry_budget_per_task: number;
  context_max_share: number;
  health: z.output<typeof HealthSchema>;
  breaker: z.output<typeof BreakerSchema>;
  recovery: z.output<typeof RecoverySchema>;
  overload: z.output<typeof OverloadSchema>;
  backoff: z.output<typeof BackoffSchema>;
  probes: z.output<typeof ProbesSchema>;
  /** The gateway's response cache (`response_cache` in the file). */
  cache: z.output<typeof CacheSchema>;
  gateway: z.output<typeof GatewaySchema>;
  fleet_limits: z.output<typeof FleetLimitsSchema>;
  dynamic_weights: DynamicWeightsConfig;
  /** Business canary probes; none when absent. */
  canaries: CanariesConfig | null;
  /** Model aliases: name → request meta. */
  models: Record<string, ModelAlias>;
  targets: TargetConfig[];
  routes: RuleConfig[];
}
