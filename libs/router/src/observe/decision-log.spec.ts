import type { RequestMeta } from '@switchyard/contracts';
import { UpstreamError } from '../calls/upstream-error';
import type { TargetConfig } from '../config/router-config.schema';
import type { RoutingDecision } from '../routing/routing-decision';
import { decisionLogEntry } from './decision-log';

const meta = { task_type: 'summarize', sensitivity: 'internal' } as RequestMeta;
const target = (name: string, type: 'local' | 'cloud') => ({ name, type, model: `${name}-model` }) as TargetConfig;

function decision(over: Partial<RoutingDecision>): RoutingDecision {
  return { target: target('local_vllm_7b', 'local'), rule: 'cheap_local', matchedRules: ['cheap_local'], policy: 'local_first', candidates: [{ target: 'local_vllm_7b', rule: 'cheap_local', eligible: true }], ...over };
}

describe('decisionLogEntry', () => {
  it('logs a routine first choice at debug with the rule and candidates', () => {
    const entry = decisionLogEntry(decision({}), meta, 1, undefined);
    expect(entry.level).toBe('debug');
    expect(entry.fields).toMatchObject({ target: 'local_vllm_7b', rule: 'cheap_local', matched_rules: ['cheap_local'], attempt: 1, dropped: [] });
  });

  it('logs a failover at info with the target it left and why', () => {
    const previous = new UpstreamError('local_vllm_7b', 'rate_limited', 'slow down', 429);
    const entry = decisionLogEntry(decision({ target: target('cloud_main', 'cloud'), candidates: [{ target: 'cloud_main', rule: 'cheap_local', eligible: true }] }), meta, 2, previous);
    expect(entry).toMatchObject({ level: 'info', message: 'routing decision: failover to another target' });
    expect(entry.fields).toMatchObject({ target: 'cloud_main', failover_from: 'local_vllm_7b', failover_reason: 'rate_limited', attempt: 2 });
  });

  it('logs a choice whose preferred rule had every target dropped at info, with the reasons', () => {
    const entry = decisionLogEntry(
      decision({
        target: target('local_vllm_32b', 'local'),
        rule: 'fallback',
        matchedRules: ['cheap_local', 'fallback'],
        candidates: [
          { target: 'local_vllm_7b', rule: 'cheap_local', eligible: false, reason: 'breaker open' },
          { target: 'local_vllm_32b', rule: 'fallback', eligible: true },
        ],
      }),
      meta,
      1,
      undefined,
    );
    expect(entry.level).toBe('info');
    expect(entry.fields.dropped).toEqual([{ target: 'local_vllm_7b', rule: 'cheap_local', reason: 'breaker open' }]);
  });
});
