/**
 * Weighted splits inside a rule (seed 003 §4.4), by weighted rendezvous hashing (HRW): each
 * target of the split draws `-ln(u) / weight` with `u` a uniform value from the hash of the
 * call's sticky key and the target's name; the lowest draw is first. So a target takes
 * `weight / Σ weights` of the keys; with a sticky key (the job) every call of that key ranks
 * the targets the same way, and when a target is filtered out only its own keys move — to
 * the next in their own ranking, which spreads them over the rest in proportion to weight.
 * Without a key the draw is random per call. Weight 0 (a standby) ranks after every
 * weighted target, in config order.
 */

const TWO_POW_32 = 4_294_967_296;
const TWO_POW_52 = 4_503_599_627_370_496;

/** murmur3's 32-bit finaliser: every input bit affects every output bit. */
function mix32(h: number): number {
  let x = h;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85eb_ca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2_ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** FNV-1a over the UTF-16 code units of `a`, a separator, then `b`. */
function fnv1a(a: string, b: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < a.length; i += 1) h = Math.imul(h ^ a.charCodeAt(i), 0x0100_0193);
  h = Math.imul(h ^ 0x1f, 0x0100_0193);
  for (let i = 0; i < b.length; i += 1) h = Math.imul(h ^ b.charCodeAt(i), 0x0100_0193);
  return mix32(h);
}

/** A uniform value in (0, 1) from `key` and `name`, with 52 bits of the hash. */
export function hashUnit(key: string, name: string): number {
  const high = fnv1a(key, name, 0x811c_9dc5);
  const low = fnv1a(key, name, 0x050c_5d1f) >>> 12;
  return (high * 2 ** 20 + low + 0.5) / TWO_POW_52;
}

export interface SplitEntry {
  /** Index into the rule's targets. */
  position: number;
  weight: number;
}

/**
 * The rule's targets in the order this call tries them: by HRW draw for positive weights,
 * then the standbys. `unit(position)` gives the call's uniform value for one target.
 */
export function splitOrder(weights: readonly number[], unit: (position: number) => number): number[] {
  const draws: { position: number; draw: number }[] = [];
  const standby: number[] = [];
  weights.forEach((weight, position) => {
    if (weight > 0) draws.push({ position, draw: -Math.log(unit(position)) / weight });
    else standby.push(position);
  });
  draws.sort((a, b) => a.draw - b.draw || a.position - b.position);
  return [...draws.map((entry) => entry.position), ...standby];
}

/** The split order for a sticky key (the same for every call with that key). */
export function stickySplitOrder(weights: readonly number[], names: readonly string[], key: string): number[] {
  return splitOrder(weights, (position) => hashUnit(key, names[position]!));
}

/** The split order from random draws (a call without a sticky key). `random` returns [0, 1). */
export function randomSplitOrder(weights: readonly number[], random: () => number): number[] {
  return splitOrder(weights, () => (Math.floor(random() * TWO_POW_32) + 0.5) / TWO_POW_32);
}

/** Each eligible target's share (percent) of the split once the others are filtered out; standbys get a share only when no weighted target is left. */
export function effectiveShares(weights: readonly number[], eligible: readonly boolean[]): number[] {
  let total = 0;
  weights.forEach((weight, position) => {
    if (eligible[position]) total += weight;
  });
  if (total > 0) return weights.map((weight, position) => (eligible[position] ? Math.round((weight / total) * 1000) / 10 : 0));
  const firstStandby = eligible.findIndex(Boolean);
  return weights.map((_, position) => (position === firstStandby ? 100 : 0));
}
