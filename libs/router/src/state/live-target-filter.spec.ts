import { RequestMetaSchema } from '@switchyard/contracts';
import { FakeClock } from '../clock';
import { parseRouterConfig } from '../config/router-config.loader';
import { DEFAULT_OVERLOAD_SETTINGS } from '../quota/overload';
import { quotaHeadroom, RateWindow } from '../quota/rate-window';
import { scoreTarget } from '../scoring/target-score';
import { liveTargetFilter } from './live-target-filter';
import { TargetStateRegistry } from './target-state';

const config = parseRouterConfig(
  `
router:
  recovery: {switch_cooldown_ms: 90000, hold_ms: 10000, max_step_points: 100}
  targets:
    - {name: a, type: local, endpoint: "http://127.0.0.1:1/v1", model: a, max_concurrency: 2, context_window: 1000, cost_per_1k_tokens: {input: 0, output: 0}, rpm: 2, tpm: 500}
    - {name: c, type: cloud, endpoint: "http://127.0.0.1:2/v1", model: c, max_concurrency: 2, context_window: 1000, cost_per_1k_tokens: {input: 0.002, output: 0.008}}
  routes:
    - {name: all, when: {all_else: true}, target: a}
`,
  'live-filter.spec',
);
const target = config.targets[0]!;
const meta = (sensitivity: 'internal' | 'sensitive' = 'internal', tokens = 10) => RequestMetaSchema.parse({ sensitivity, estimated_input_tokens: tokens });

function setup(random = 0.5) {
  const clock = new FakeClock();
  const registry = new TargetStateRegistry(config.config);
  const filter = liveTargetFilter(registry, clock, { overload: DEFAULT_OVERLOAD_SETTINGS, random: () => random, applyShare: true });
  return { clock, state: registry.get('a')!, filter };
}

describe('liveTargetFilter', () => {
  it('drops a cold-starting target (model still loading) for all work until it answers', () => {
    const { state, filter } = setup();
    const unmetered = { ...target, rpm: undefined, tpm: undefined };
    state.coldStart = true;
    expect(filter(unmetered, meta())).toEqual({ reason: 'cold_start' });
    expect(filter(unmetered, meta('sensitive'))).toEqual({ reason: 'cold_start' });
    state.observe(0, { ok: true, latencyMs: 5 });
    expect(filter(unmetered, meta())).toBeNull();
  });

  it('drops a full target for normal work but lets sensitive work queue on it', () => {
    const { state, filter, clock } = setup();
    state.begin(clock.now(), 0);
    state.begin(clock.now(), 0);
    const unmetered = { ...target, rpm: undefined, tpm: undefined };
    expect(filter(unmetered, meta())).toEqual({ reason: 'concurrency_full' });
    expect(filter(unmetered, meta('sensitive'))).toBeNull();
  });

  it('checks RPM and TPM headroom for this request', () => {
    const { state, filter, clock } = setup();
    state.rate.add(clock.now(), 400);
    expect(filter(target, meta('internal', 50))).toBeNull();
    expect(filter(target, meta('internal', 200))).toEqual({ reason: 'tpm_quota' });
    state.rate.add(clock.now(), 0);
    expect(filter(target, meta())).toEqual({ reason: 'rpm_quota' });
    clock.advance(60_000);
    expect(filter(target, meta())).toBeNull();
  });

  it('holds a recovering target back by its share', () => {
    const { state, filter, clock } = setup(0.5);
    state.ramp.trip(clock.now());
    expect(filter(target, meta())).toEqual({ reason: 'recovering' });
    clock.advance(90_000 + 2 * 10_000); // third step: 60 %
    expect(filter(target, meta())).toBeNull();
  });
});

describe('RateWindow', () => {
  it('sums the last minute only', () => {
    const window = new RateWindow();
    window.add(0, 100);
    window.add(30_000, 50);
    expect(window.totals(59_999)).toEqual({ requests: 2, tokens: 150 });
    expect(window.totals(60_000)).toEqual({ requests: 1, tokens: 50 });
    expect(quotaHeadroom(window, {}, 0, 1e9)).toBeNull();
  });
});

describe('scoreTarget', () => {
  const [local, cloud] = config.targets as [typeof target, typeof target];
  const healthy = { health: 100, firstTokenP50Ms: null };
  it('prefers the local, cheap target under local_first and the better model under quality_first', () => {
    expect(scoreTarget(local, 'local_first', healthy)).toBeGreaterThan(scoreTarget(cloud, 'local_first', healthy));
    expect(scoreTarget({ ...cloud, quality: 9 }, 'quality_first', healthy)).toBeGreaterThan(scoreTarget(local, 'quality_first', healthy));
  });
  it('prefers the faster target under latency_first and the healthier one under any policy', () => {
    expect(scoreTarget(cloud, 'latency_first', { health: 100, firstTokenP50Ms: 100 })).toBeGreaterThan(
      scoreTarget(local, 'latency_first', { health: 100, firstTokenP50Ms: 3000 }),
    );
    expect(scoreTarget(local, 'local_first', { health: 40, firstTokenP50Ms: null })).toBeLessThan(scoreTarget(local, 'local_first', healthy));
  });
});
