import { hashSlotOf, keyPatternsOf, keyspaceOf, spreadFeaturePrefix, taggedFeaturePrefix } from './redis-keys';
import { overridesChannel, overridesKey, snapshotKey, snapshotsIndexKey } from './router-keys';

describe('Redis key naming for a cluster', () => {
  it('computes the slots Redis Cluster computes (CRC16 of the hash tag, else of the key)', () => {
    // Values from the Redis Cluster specification and `CLUSTER KEYSLOT`.
    expect(hashSlotOf('foo')).toBe(12_182);
    expect(hashSlotOf('123456789')).toBe(0x31c3 % 16_384);
    expect(hashSlotOf('{user1000}.following')).toBe(hashSlotOf('{user1000}.followers'));
    expect(hashSlotOf('foo{}{bar}')).not.toBe(hashSlotOf('bar'));
  });

  it('keeps each multi-key feature in one slot of its own, apart from the queues', () => {
    const prefix = '{switchyard}';
    const queues = hashSlotOf(`${prefix}:extract:wait`);
    const fleet = [snapshotsIndexKey(prefix), snapshotKey(prefix, 'worker:w1'), snapshotKey(prefix, 'supervisor:h:1')].map(hashSlotOf);
    const overrides = [overridesKey(prefix), overridesChannel(prefix)].map(hashSlotOf);
    expect(new Set(fleet).size).toBe(1);
    expect(new Set(overrides).size).toBe(1);
    expect(new Set([queues, fleet[0], overrides[0]]).size).toBe(3);
  });

  it('spreads a single-key feature over many slots', () => {
    const gateway = spreadFeaturePrefix('{switchyard}', 'gateway');
    const slots = new Set(Array.from({ length: 50 }, (_, i) => hashSlotOf(`${gateway}cache:tenant-${i}:abc`)));
    expect(slots.size).toBeGreaterThan(40);
  });

  it('matches every key of a prefix, and no key of another prefix, with its SCAN patterns', () => {
    const prefix = '{sy-e2e-1a2b}';
    const ours = [`${prefix}:extract:wait`, `${taggedFeaturePrefix(prefix, 'router-fleet')}snapshots`, `${spreadFeaturePrefix(prefix, 'gateway')}idem:t:k`];
    const theirs = ['{sy-e2e-1a2bc}:extract:wait', '{sy-e2e-1a2bc:router-fleet}:snapshots', 'sy-e2e-1a2bc:gateway:idem:t:k'];
    const globToRegExp = (glob: string) => new RegExp(`^${glob.replace(/\\(.)|([.+^${}()|])|(\*)/g, (_, escaped: string, special: string, star: string) => (escaped ? `\\${escaped}` : special ? `\\${special}` : star ? '.*' : ''))}$`);
    const patterns = keyPatternsOf(prefix).map(globToRegExp);
    for (const key of ours) expect(patterns.some((p) => p.test(key))).toBe(true);
    for (const key of theirs) expect(patterns.some((p) => p.test(key))).toBe(false);
    expect(keyspaceOf(prefix)).toBe('sy-e2e-1a2b');
  });
});
