/**
 * Every Redis key the platform writes, by feature, so that a Redis Cluster can hold them.
 *
 * - BullMQ's keys sit under QUEUE_PREFIX itself, a hash tag (`{switchyard}`): a queue's Lua
 *   scripts touch many keys at once, so the whole prefix is one slot.
 * - A feature whose commands touch several keys at once (MULTI, MGET) gets a tag of its own,
 *   `{switchyard:<feature>}`: its keys share a slot, and features land on different shards.
 * - A feature whose commands touch one key at a time (gateway cache and idempotency records,
 *   a job's retry budget) gets no tag: each key hashes on its own and spreads over all shards.
 */

/** The name inside QUEUE_PREFIX's braces: `{switchyard}` → `switchyard`. */
export function keyspaceOf(queuePrefix: string): string {
  return queuePrefix.replace(/[{}]/g, '');
}

/** Prefix of a multi-key feature's keys, all in one slot of their own: `{switchyard:fleet}:`. */
export function taggedFeaturePrefix(queuePrefix: string, feature: string): string {
  return `{${keyspaceOf(queuePrefix)}:${feature}}:`;
}

/** Prefix of a single-key feature's keys, each in its own slot: `switchyard:gateway:`. */
export function spreadFeaturePrefix(queuePrefix: string, feature: string): string {
  return `${keyspaceOf(queuePrefix)}:${feature}:`;
}

/** SCAN patterns that together match every key of a QUEUE_PREFIX (BullMQ's, tagged and spread features'). */
export function keyPatternsOf(queuePrefix: string): string[] {
  const name = keyspaceOf(queuePrefix).replace(/[*?[\]\\]/g, '\\$&');
  return [...new Set([`${queuePrefix.replace(/[*?[\]\\]/g, '\\$&')}:*`, `{${name}:*`, `${name}:*`])];
}

/** The hash slot Redis Cluster gives a key (CRC16/XMODEM of the hash tag, or of the key), for tests and checks. */
export function hashSlotOf(key: string): number {
  const open = key.indexOf('{');
  if (open !== -1) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(key)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16_384;
}
