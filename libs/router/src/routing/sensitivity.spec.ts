import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { COMPLEXITIES, PRIORITIES, RequestMetaSchema, TASK_TYPES } from '@switchyard/contracts';
import { validateRouterConfig } from '../config/router-config.loader';
import { compileRouterConfig } from '../config/compile-router-config';
import { ROUTING_POLICIES } from '../config/router-config.schema';
import type { CandidateFilter } from './candidate-filter';
import { decideRoute } from './decide';
import { NoEligibleTargetError } from './no-eligible-target.error';

interface RawRoute {
  name: string;
  when: Record<string, unknown>;
  target?: string;
  targets?: string[];
  priority: number;
}

/** The shipped file, plus a second, cheaper and better cloud target that every policy would love. */
const shipped = parse(readFileSync(join(__dirname, '../../../../config/router.yaml'), 'utf8')) as {
  router: { targets: Record<string, unknown>[]; routes: RawRoute[] };
};
const cloudBait = { ...shipped.router.targets[2], name: 'cloud_bait', cost_per_1k_tokens: { input: 0, output: 0 }, quality: 10 };
const targets = [...shipped.router.targets, cloudBait];
const targetNames = targets.map((t) => t.name as string);
const shippedRoutes = shipped.router.routes;
const withoutCatchAll = shippedRoutes.filter((r) => !('all_else' in r.when));

/** Route sets that try hard to send sensitive traffic to the cloud. */
const routeSets: Record<string, RawRoute[]> = {
  shipped: shippedRoutes,
  'p999 sensitive -> cloud': [{ name: 'leak', when: { sensitivity: 'sensitive' }, target: 'cloud_main', priority: 999 }, ...shippedRoutes],
  'p999 sensitive -> [cloud, cloud, local]': [
    { name: 'leak', when: { sensitivity: 'sensitive' }, targets: ['cloud_bait', 'cloud_main', 'local_vllm_7b'], priority: 999 },
    ...shippedRoutes,
  ],
  'catch-all names only cloud': [...withoutCatchAll, { name: 'fallback', when: { all_else: true }, targets: ['cloud_main', 'cloud_bait'], priority: 1 }],
  'everything -> cloud': [
    { name: 'leak_all', when: { all_else: true }, targets: ['cloud_bait', 'cloud_main'], priority: 1000 },
    { name: 'leak_sensitive', when: { sensitivity: ['sensitive', 'public'] }, target: 'cloud_main', priority: 500 },
  ],
};

const sensitiveMetas = TASK_TYPES.flatMap((task_type) =>
  COMPLEXITIES.flatMap((complexity) =>
    PRIORITIES.flatMap((priority) => [[], ['vip']].map((tags) => RequestMetaSchema.parse({ task_type, complexity, priority, tags, sensitivity: 'sensitive' }))),
  ),
);

const exclusionSubsets = Array.from({ length: 1 << targetNames.length }, (_, mask) => targetNames.filter((_, bit) => mask & (1 << bit)));

/** A filter that waves every target through, so the filter path is exercised too. */
const permissive: CandidateFilter = () => null;

describe('sensitive requests never reach a cloud target', () => {
  it.each(Object.entries(routeSets))('under route set "%s", every policy, fallback setting and exclusion subset', (_label, routes) => {
    let decisions = 0;
    let refusals = 0;
    for (const policy of ROUTING_POLICIES) {
      for (const fallback of [true, false]) {
        const config = compileRouterConfig(
          validateRouterConfig(parse(stringify({ router: { default_policy: policy, fallback_to_any_eligible: fallback, targets, routes } })), 'enum'),
        );
        for (const meta of sensitiveMetas) {
          for (const excluded of exclusionSubsets) {
            for (const filters of [[], [permissive]]) {
              try {
                const decision = decideRoute(config, meta, { excludeTargets: excluded, filters });
                decisions++;
                if (decision.target.type !== 'local') {
                  throw new Error(`sensitive request sent to ${decision.target.name} (${policy}, fallback ${fallback}, excluded [${excluded}], ${JSON.stringify(meta)})`);
                }
                if (excluded.includes(decision.target.name)) throw new Error(`excluded target ${decision.target.name} chosen`);
              } catch (error) {
                if (!(error instanceof NoEligibleTargetError)) throw error;
                refusals++;
                if (!error.message.includes('never sent anywhere but local targets')) throw new Error(`refusal does not explain: ${error.message}`, { cause: error });
              }
            }
          }
        }
      }
    }
    expect(decisions + refusals).toBe(ROUTING_POLICIES.length * 2 * sensitiveMetas.length * exclusionSubsets.length * 2);
    expect(decisions).toBeGreaterThan(0);
    expect(refusals).toBeGreaterThan(0);
  });
});
