import { overridesFromHash, overridesToHash, planOverrides, type RouterOverrides } from './fleet-overrides';

const known = new Set(['local_vllm_7b', 'local_vllm_32b', 'cloud_main']);
const none: RouterOverrides = { drained: [], forcedPrimary: null, readOnly: false };

describe('override hash ↔ overrides', () => {
  it('reads drained:<target> fields and force_primary', () => {
    expect(overridesFromHash({ 'drained:local_vllm_7b': '2026-01-01T00:00:00.000Z', 'drained:cloud_main': 'x', force_primary: 'local_vllm_32b' })).toEqual({
      drained: ['cloud_main', 'local_vllm_7b'],
      forcedPrimary: 'local_vllm_32b',
      readOnly: false,
    });
    expect(overridesFromHash({ read_only: '2026-01-01T00:00:00.000Z' })).toEqual({ drained: [], forcedPrimary: null, readOnly: true });
  });

  it('reads an empty hash as no overrides and ignores fields it does not know', () => {
    expect(overridesFromHash({})).toEqual(none);
    expect(overridesFromHash({ 'drained:': '1', force_primary: '', future_field: 'x' })).toEqual(none);
  });

  it('round-trips', () => {
    const overrides: RouterOverrides = { drained: ['a', 'b'], forcedPrimary: 'c', readOnly: false };
    expect(overridesFromHash(overridesToHash(overrides))).toEqual(overrides);
    expect(overridesFromHash(overridesToHash({ ...overrides, readOnly: true }))).toEqual({ ...overrides, readOnly: true });
    expect(overridesToHash(none)).toEqual({});
  });
});

describe('planOverrides', () => {
  it('drains and enables only what differs', () => {
    const plan = planOverrides({ drained: ['local_vllm_7b', 'cloud_main'], forcedPrimary: null, readOnly: false }, { drained: ['cloud_main', 'local_vllm_32b'], forcedPrimary: null, readOnly: false }, known);
    expect(plan).toEqual({ drain: ['local_vllm_7b'], enable: ['local_vllm_32b'], unknown: [] });
  });

  it('leaves an unchanged forced primary alone and sets or clears a changed one', () => {
    expect(planOverrides({ drained: [], forcedPrimary: 'cloud_main', readOnly: false }, { drained: [], forcedPrimary: 'cloud_main', readOnly: false }, known).forcePrimary).toBeUndefined();
    expect(planOverrides({ drained: [], forcedPrimary: 'cloud_main', readOnly: false }, none, known).forcePrimary).toBe('cloud_main');
    expect(planOverrides(none, { drained: [], forcedPrimary: 'cloud_main', readOnly: false }, known).forcePrimary).toBeNull();
  });

  it('reports and ignores targets the config does not have', () => {
    const plan = planOverrides({ drained: ['gone_target', 'local_vllm_7b'], forcedPrimary: 'old_primary', readOnly: false }, none, known);
    expect(plan.drain).toEqual(['local_vllm_7b']);
    expect(plan.unknown).toEqual(['gone_target', 'old_primary']);
    // An unknown forced primary means normal routing, not a stale preference.
    expect(plan.forcePrimary).toBeUndefined();
    expect(planOverrides({ drained: [], forcedPrimary: 'old_primary', readOnly: false }, { drained: [], forcedPrimary: 'cloud_main', readOnly: false }, known).forcePrimary).toBeNull();
  });

  it('switches read-only mode on and off only when it differs', () => {
    const readOnly: RouterOverrides = { ...none, readOnly: true };
    expect(planOverrides(readOnly, none, known).readOnly).toBe(true);
    expect(planOverrides(none, readOnly, known).readOnly).toBe(false);
    expect(planOverrides(readOnly, readOnly, known).readOnly).toBeUndefined();
  });

  it('is a no-op when the router already matches', () => {
    const state: RouterOverrides = { drained: ['local_vllm_7b'], forcedPrimary: 'local_vllm_32b', readOnly: false };
    expect(planOverrides(state, state, known)).toEqual({ drain: [], enable: [], unknown: [] });
  });
});
