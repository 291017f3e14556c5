import { resolve } from 'node:path';
import { loadRouterConfig } from './router-config.loader';

describe('config/router.yaml', () => {
  it('validates, with the documented defaults written out', () => {
    const config = loadRouterConfig(resolve(__dirname, '../../../../config/router.yaml')).config;
    expect(config.retry_budget_per_job).toBe(12);
    expect(config.retry_budget_per_task).toBe(1);
    expect(config.timeouts).toMatchObject({ connect_ms: 3000, first_token_local_ms: 15000, first_token_cloud_ms: 30000 });
    expect(config.cache).toMatchObject({ enabled: false, ttl_s: { qa: 300, default: 0 } });
    expect(config.targets.map((t) => t.name)).toEqual(['local_vllm_7b', 'local_vllm_32b', 'cloud_main']);
  });
});
