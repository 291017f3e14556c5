import { readFileSync } from 'node:fs';

/** The parts of a V8 .cpuprofile this summary reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string } }[];
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

/** Self time by package, highest first, as shares of the sampled time (idle excluded). */
export function selfTimeByOwner(file: string): { owner: string; ms: number; share: number }[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)?.callFrame;
    const micros = profile.timeDeltas[i + 1] ?? 0;
    if (!frame || frame.functionName === '(idle)') return;
    const key = owner(frame.url, frame.functionName);
    totals.set(key, (totals.get(key) ?? 0) + micros);
    busy += micros;
  });
  return [...totals.entries()].map(([key, micros]) => ({ owner: key, ms: micros / 1_000, share: micros / busy })).sort((a, b) => b.ms - a.ms);
}
