import { stringify } from 'yaml';
import { COMPLEXITIES, PRIORITIES, RequestMetaSchema, SENSITIVITIES, TASK_TYPES, type RequestMeta } from '@switchyard/contracts';
import {
  ANY_ELIGIBLE_RULE,
  NoEligibleTargetError,
  contextWindowFilter,
  decideRoute,
  missingApiKeyFilter,
  parseRouterConfig,
  type CandidateFilter,
  type CompiledRouterConfig,
} from '@switchyard/router';
import { fixed, heading, percentile, table, verdict } from './support/report';

/** Decisions timed together; the timer is read once per batch so its own cost stays out. */
const BATCH = 100;

export interface RoutingCase {
  name: string;
  targets: number;
  rules: number;
  /** The bar for the median time of one decision. */
  p50TargetUs: number;
}

export const ROUTING_CASES: readonly RoutingCase[] = [
  { name: 'small', targets: 4, rules: 10, p50TargetUs: 5 },
  { name: 'large', targets: 50, rules: 100, p50TargetUs: 20 },
];

export interface RoutingResult {
  routingCase: RoutingCase;
  compileMs: number;
  decisions: number;
  p50Us: number;
  p99Us: number;
  singleP50Us: number;
  singleP99Us: number;
  outcomes: { specificRule: number; catchAll: number; anyEligible: number };
  pass: boolean;
}

/** mulberry32: a small seeded PRNG, so every run decides over the same configs and metas. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TAGS = ['legal', 'finance', 'hr', 'medical', 'code-review', 'vip', 'batch', 'zh', 'en', 'pii'];
const BUSINESS = ['contracts', 'support', 'search', 'billing', 'research', 'ops'];
const MISSING_KEY_ENV = 'SY_BENCH_UNSET_KEY';

function pickSome<T>(rand: () => number, values: readonly T[], min: number, max: number): T[] {
  const count = min + Math.floor(rand() * (max - min + 1));
  const pool = [...values];
  const out: T[] = [];
  while (out.length < count && pool.length > 0) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!);
  return out;
}

/** A router.yaml with `targets` targets (half local) and `rules` rules, the last a catch-all. */
export function buildRouterYaml(targetCount: number, ruleCount: number, seed = 42): string {
  const rand = prng(seed);
  const targets = Array.from({ length: targetCount }, (_, i) => {
    const local = i % 2 === 0;
    return {
      name: `${local ? 'local' : 'cloud'}_${String(i).padStart(3, '0')}`,
      type: local ? 'local' : 'cloud',
      endpoint: `http://127.0.0.1:${19000 + i}/v1`,
      model: `model-${i}`,
      max_concurrency: 8 + (i % 5) * 8,
      // Some small windows, so the context-window filter drops targets for long inputs.
      context_window: local ? (i % 4 === 0 ? 32_768 : 8_192) : 128_000,
      cost_per_1k_tokens: { input: local ? 0.0001 * (i + 1) : 0.002 + 0.0001 * i, output: local ? 0.0001 * (i + 1) : 0.008 },
      // Every fifth cloud target names a key that is not set: the missing-key filter drops it.
      ...(!local && i % 5 === 1 ? { api_key_env: MISSING_KEY_ENV } : {}),
      quality: 1 + (i % 10),
    };
  });
  const names = targets.map((t) => t.name);
  const routes: Record<string, unknown>[] = [];
  for (let r = 0; r < ruleCount - 1; r += 1) {
    const when: Record<string, unknown> = {};
    // Every rule is about some tag or business type, plus up to two other conditions; a
    // request with neither matches no rule and scans all of them down to the catch-all.
    const keys = [
      ...pickSome(rand, ['tags', 'business_type'] as const, 1, 1),
      ...pickSome(rand, ['task_type', 'complexity', 'sensitivity', 'priority'] as const, 0, 2),
    ];
    for (const key of keys) {
      if (key === 'task_type') when.task_type = pickSome(rand, TASK_TYPES, 1, 3);
      if (key === 'complexity') when.complexity = pickSome(rand, COMPLEXITIES, 1, 2);
      if (key === 'sensitivity') when.sensitivity = pickSome(rand, SENSITIVITIES, 1, 2);
      if (key === 'priority') when.priority = pickSome(rand, PRIORITIES, 1, 1)[0];
      if (key === 'tags') when.tags = pickSome(rand, TAGS, 1, 2);
      if (key === 'business_type') when.business_type = pickSome(rand, BUSINESS, 1, 2);
    }
    const ruleTargets = pickSome(rand, names, 1, Math.min(3, names.length));
    routes.push({
      name: `rule_${String(r).padStart(3, '0')}`,
      when,
      ...(ruleTargets.length === 1 ? { target: ruleTargets[0] } : { targets: ruleTargets }),
      priority: 10 + Math.floor(rand() * 1_000),
    });
  }
  // The catch-all: a local target with the large window, so every request has somewhere to go.
  routes.push({ name: 'catch_all', when: { all_else: true }, target: names[0], priority: 0 });
  return stringify({
    router: { default_policy: 'local_first', fallback_to_any_eligible: true, targets, routes },
  });
}

/** Request metas spread over every field, parsed like a real call's meta. */
export function buildMetas(count: number, seed = 7): RequestMeta[] {
  const rand = prng(seed);
  const one = <T>(values: readonly T[]) => values[Math.floor(rand() * values.length)]!;
  return Array.from({ length: count }, () => {
    const roll = rand();
    return RequestMetaSchema.parse({
      task_type: one(TASK_TYPES),
      complexity: one(COMPLEXITIES),
      sensitivity: roll < 0.2 ? 'sensitive' : roll < 0.6 ? 'internal' : 'public',
      priority: rand() < 0.1 ? 'high' : 'normal',
      // Tags outside the rules' pool too, so some requests match nothing and fall through.
      tags: rand() < 0.3 ? [] : pickSome(rand, [...TAGS, 'misc', 'other', 'none'], 1, 3),
      ...(rand() < 0.5 ? { business_type: one([...BUSINESS, 'unlisted']) } : {}),
      ...(rand() < 0.5 ? { estimated_input_tokens: one([200, 1_500, 7_000, 20_000]) } : {}),
    });
  });
}

export function runRoutingCase(routingCase: RoutingCase): RoutingResult {
  const yamlText = buildRouterYaml(routingCase.targets, routingCase.rules);
  const compileStart = process.hrtime.bigint();
  const config: CompiledRouterConfig = parseRouterConfig(yamlText, `bench-${routingCase.name}`);
  const compileMs = Number(process.hrtime.bigint() - compileStart) / 1e6;
  if (config.targets.length !== routingCase.targets || config.rules.length !== routingCase.rules) {
    throw new Error(`config ${routingCase.name} compiled to ${config.targets.length} targets / ${config.rules.length} rules`);
  }
  // The Router's own filters (libs/router/src/router.ts): missing API key, then context window.
  // No secret is set, so the cloud targets that name an api_key_env are dropped for a missing key.
  const filters: readonly CandidateFilter[] = [missingApiKeyFilter(() => undefined), contextWindowFilter()];
  const options = { filters };

  // 1,024 metas (a power of two, so the loop indexes with a mask); each must have a target.
  const metas = buildMetas(1_024);
  const outcomes = { specificRule: 0, catchAll: 0, anyEligible: 0 };
  for (const meta of metas) {
    let decision;
    try {
      decision = decideRoute(config, meta, options);
    } catch (error) {
      if (error instanceof NoEligibleTargetError) {
        throw new Error(`bench meta has no eligible target in ${routingCase.name}: ${JSON.stringify(meta)}`, { cause: error });
      }
      throw error;
    }
    if (decision.rule === 'catch_all') outcomes.catchAll += 1;
    else if (decision.rule === ANY_ELIGIBLE_RULE) outcomes.anyEligible += 1;
    else outcomes.specificRule += 1;
  }
  const mask = metas.length - 1;
  let sink = 0;
  let cursor = 0;

  // Warm-up: let the JIT settle on the hot path.
  for (let i = 0; i < 200_000; i += 1) sink += decideRoute(config, metas[i & mask]!, options).candidates.length;

  const batches = 3_000;
  const perDecisionUs: number[] = new Array<number>(batches);
  for (let b = 0; b < batches; b += 1) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < BATCH; i += 1) {
      sink += decideRoute(config, metas[cursor & mask]!, options).candidates.length;
      cursor += 1;
    }
    perDecisionUs[b] = Number(process.hrtime.bigint() - start) / 1_000 / BATCH;
  }

  // One timer pair per decision, for the tail of single decisions (timer cost included).
  const singles = 50_000;
  const singleUs: number[] = new Array<number>(singles);
  for (let i = 0; i < singles; i += 1) {
    const start = process.hrtime.bigint();
    sink += decideRoute(config, metas[cursor & mask]!, options).candidates.length;
    singleUs[i] = Number(process.hrtime.bigint() - start) / 1_000;
    cursor += 1;
  }
  if (sink < 0) console.log(sink); // keeps the results observable, so no call is optimised away

  const p50Us = percentile(perDecisionUs, 50);
  return {
    routingCase,
    compileMs,
    decisions: 200_000 + batches * BATCH + singles,
    p50Us,
    p99Us: percentile(perDecisionUs, 99),
    singleP50Us: percentile(singleUs, 50),
    singleP99Us: percentile(singleUs, 99),
    outcomes,
    pass: p50Us <= routingCase.p50TargetUs,
  };
}

/** What one `process.hrtime.bigint()` pair costs here, to read the single-decision figures against. */
function timerOverheadUs(): number {
  const samples: number[] = [];
  for (let i = 0; i < 20_000; i += 1) {
    const start = process.hrtime.bigint();
    samples.push(Number(process.hrtime.bigint() - start) / 1_000);
  }
  return percentile(samples, 50);
}

export function runRoutingBench(cases: readonly RoutingCase[] = ROUTING_CASES): { pass: boolean; results: RoutingResult[] } {
  heading('Bench 2: routing decision time (decideRoute)');
  console.log(
    [
      `decideRoute(config, meta, { filters: [missingApiKeyFilter, contextWindowFilter] }) over 1,024 seeded request metas`,
      `(every task_type / complexity / sensitivity / priority, tags and business types in and outside the rules, some long inputs);`,
      `configs from router.yaml text via parseRouterConfig; 200,000 warm-up decisions, then ${fixed(3_000)} batches of ${BATCH}:`,
      `p50 / p99 are of the per-decision mean of each batch. "single" times each decision alone (includes one timer pair).`,
    ].join('\n'),
  );
  const results = cases.map(runRoutingCase);
  const overhead = timerOverheadUs();
  console.log(
    '\n' +
      table(
        ['config', 'compile ms', 'p50 µs', 'p99 µs', 'single p50 µs', 'single p99 µs', 'rule / catch-all / any-eligible', 'target p50', 'result'],
        results.map((r) => [
          `${r.routingCase.targets} targets × ${r.routingCase.rules} rules`,
          fixed(r.compileMs, 1),
          fixed(r.p50Us, 2),
          fixed(r.p99Us, 2),
          fixed(r.singleP50Us, 2),
          fixed(r.singleP99Us, 2),
          `${r.outcomes.specificRule} / ${r.outcomes.catchAll} / ${r.outcomes.anyEligible}`,
          `≤ ${r.routingCase.p50TargetUs} µs`,
          verdict(r.pass),
        ]),
      ),
  );
  console.log(`\ntimer pair overhead (p50): ${fixed(overhead, 3)} µs`);
  return { pass: results.every((r) => r.pass), results };
}
