import { z } from 'zod';
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
export const DEFAULT_TIMEOUTS = { local_ms: 30_000, cloud_ms: 60_000 } as const;
export const DEFAULT_MAX_ATTEMPTS_PER_CALL = 3;

/** Names show up in logs, metrics labels and headers, so they are kept plain. */
const nameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'letters, digits, "_", "." and "-", starting with a letter or digit, at most 64 characters');

const timeoutMsSchema = z.number().int().min(100).max(600_000);

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
});

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

const RuleSchema = z
  .strictObject({
    name: nameSchema,
    when: WhenSchema,
    target: z.string().min(1).optional(),
    targets: z.array(z.string().min(1)).min(1).optional(),
    priority: z.number().int().default(0),
  })
  .superRefine((rule, ctx) => {
    if (rule.target !== undefined && rule.targets !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['targets'], message: 'give either `target` or `targets`, not both' });
    } else if (rule.target === undefined && rule.targets === undefined) {
      ctx.addIssue({ code: 'custom', path: ['target'], message: 'a rule needs `target` (one name) or `targets` (an ordered list)' });
    }
    const seen = new Set<string>();
    rule.targets?.forEach((name, index) => {
      if (seen.has(name)) ctx.addIssue({ code: 'custom', path: ['targets', index], message: `target "${name}" is listed twice` });
      seen.add(name);
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
      })
      .default({ ...DEFAULT_TIMEOUTS }),
    max_attempts_per_call: z.number().int().min(1).max(10).default(DEFAULT_MAX_ATTEMPTS_PER_CALL),
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
      rule.targets?.forEach((name, position) => {
        if (!targetNames.has(name)) {
          ctx.addIssue({ code: 'custom', path: ['routes', index, 'targets', position], message: `unknown target "${name}"; known targets: ${known}` });
        }
      });
    });
    if (!router.routes.some((rule) => rule.when.all_else)) {
      ctx.addIssue({ code: 'custom', path: ['routes'], message: 'no catch-all route; add one with `when: {all_else: true}`' });
    }
  })
  .transform((router): RouterConfig => ({
    default_policy: router.default_policy,
    fallback_to_any_eligible: router.fallback_to_any_eligible,
    timeouts: router.timeouts,
    max_attempts_per_call: router.max_attempts_per_call,
    targets: router.targets.map((target) => ({
      ...target,
      quality: target.quality ?? DEFAULT_QUALITY[target.type],
      timeout_ms: target.timeout_ms ?? (target.type === 'local' ? router.timeouts.local_ms : router.timeouts.cloud_ms),
    })),
    routes: router.routes.map(({ target, targets, ...rule }) => ({ ...rule, targets: targets ?? (target === undefined ? [] : [target]) })),
  }));

export const RouterConfigFileSchema = z.strictObject({ router: RouterSectionSchema });

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
}

/** A rule with `target`/`targets` normalised to an ordered list. */
export interface RuleConfig {
  name: string;
  when: RuleCondition;
  targets: string[];
  priority: number;
}

export interface RouterConfig {
  default_policy: RoutingPolicy;
  fallback_to_any_eligible: boolean;
  timeouts: { local_ms: number; cloud_ms: number };
  max_attempts_per_call: number;
  targets: TargetConfig[];
  routes: RuleConfig[];
}
