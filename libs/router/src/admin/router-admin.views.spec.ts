import { createLogger } from '@switchyard/observability';
import { parseRouterConfig } from '../config/router-config.loader';
import { Router } from '../router';

const ENDPOINT = 'http://user:secret@127.0.0.1:1/v1';

function routerWithCredentialsInEndpoint(): Router {
  const config = parseRouterConfig(
    `
router:
  targets:
    - {name: local_a, type: local, endpoint: "${ENDPOINT}", model: a, max_concurrency: 2, context_window: 4096, cost_per_1k_tokens: {input: 0, output: 0}}
  routes:
    - {name: all, when: {all_else: true}, target: local_a, priority: 1}
`,
    'router-admin.views.spec',
  );
  return new Router({ config, secrets: () => undefined, logger: createLogger('router-admin-views-spec', 'silent') });
}

describe('target snapshot', () => {
  it('shows the endpoint without its user and password, while the config keeps them for the calls', () => {
    const router = routerWithCredentialsInEndpoint();
    const [snapshot] = router.snapshot();
    expect(snapshot?.endpoint).toBe('http://***@127.0.0.1:1/v1');
    expect(JSON.stringify(router.snapshot())).not.toContain('secret');
    expect(router.config.targetsByName.get('local_a')?.endpoint).toBe(ENDPOINT);
  });
});
