import { resolve } from 'node:path';
import { RequestMetaSchema } from '@switchyard/contracts';
import { decideRoute } from '../routing/decide';
import { resolveModelAlias } from '../routing/model-alias';
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

  it('ships model aliases that route as their names say; `private` and a sensitive body stay local', () => {
    const compiled = loadRouterConfig(resolve(__dirname, '../../../../config/router.yaml'));
    const routed = (model: string, metadata: Record<string, unknown> = {}) => {
      const resolved = resolveModelAlias(model, compiled.config.models, metadata);
      if (!resolved.ok) throw new Error(`no alias ${model}`);
      const decision = decideRoute(compiled, RequestMetaSchema.parse(resolved.meta));
      return decision.target.type;
    };
    expect(Object.keys(compiled.config.models).sort()).toEqual(['extract', 'fast', 'private', 'reasoning', 'summarize']);
    expect(routed('fast')).toBe('local');
    expect(routed('extract')).toBe('local');
    expect(routed('reasoning')).toBe('cloud');
    expect(routed('private')).toBe('local');
    expect(routed('private', { task_type: 'reasoning', complexity: 'high' })).toBe('local');
    expect(routed('reasoning', { sensitivity: 'sensitive' })).toBe('local');
  });
});
