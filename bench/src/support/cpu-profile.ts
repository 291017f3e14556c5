import { readFileSync } from 'node:fs';

/** The parts of a V8 .cpuprofile this summary reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber?: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** Which package (or runtime part) a frame belongs to. */
function owner(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : `native ${functionName}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const lib = /\/libs\/([^/]+)\//.exec(url);
  if (lib) return `@switchyard/${lib[1]}`;
  if (url.includes('/bench/')) return 'bench harness';
  if (url.startsWith('node:')) return 'node core';
  return url;
}

type Frame = CpuProfile['nodes'][number]['callFrame'];

/** Sampled self time per key of a frame, highest first, as shares of the sampled time (idle excluded). */
function selfTimeBy(file: string, keyOf: (frame: Frame) => string): { key: string; ms: number; share: number }[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)?.callFrame;
    const micros = profile.timeDeltas[i + 1] ?? 0;
    if (!frame || frame.functionName === '(idle)') return;
    const key = keyOf(frame);
    totals.set(key, (totals.get(key) ?? 0) + micros);
    busy += micros;
  });
  return [...totals.entries()].map(([key, micros]) => ({ key, ms: micros / 1_000, share: micros / busy })).sort((a, b) => b.ms - a.ms);
}

/** Self time by package, highest first, as shares of the sampled time (idle excluded). */
export function selfTimeByOwner(file: string): { owner: string; ms: number; share: number }[] {
  return selfTimeBy(file, (frame) => owner(frame.url, frame.functionName)).map(({ key, ms, share }) => ({ owner: key, ms, share }));
}

const SEPARATOR = '\u0000';

/** Self time by function (name, and its package and file:line), highest first. */
export function selfTimeByFunction(file: string): { name: string; where: string; ms: number; share: number }[] {
  return selfTimeBy(file, (frame) => {
    const path = frame.url.replace(/^.*\/node_modules\//, '').replace(/^.*\/(libs|apps|bench)\//, '$1/');
    const where = frame.url ? `${path}:${(frame.lineNumber ?? 0) + 1}` : owner(frame.url, frame.functionName);
    return `${frame.functionName || '(anonymous)'}${SEPARATOR}${where}`;
  }).map(({ key, ms, share }) => {
    const [name = '', where = ''] = key.split(SEPARATOR);
    return { name, where, ms, share };
  });
}
