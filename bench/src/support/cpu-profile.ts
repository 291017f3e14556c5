import { readFileSync } from 'node:fs';
import { fixed, table } from './report';

/** The parts of a V8 .cpuprofile this summary reads. */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber?: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Which package (or runtime part) a frame belongs to. */
function owner(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : `native ${functionName}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const lib = /\/(?:libs|apps)\/([^/]+)\//.exec(url);
  if (lib) return `@switchyard/${lib[1]}`;
  if (url.includes('/bench/')) return 'bench harness';
  if (url.startsWith('node:')) return 'node core';
  return url;
}

export interface SelfTime {
  key: string;
  ms: number;
  share: number;
}

export interface SelfTimeOptions {
  /**
   * Count only the samples after the first stretch of at least this many ms of idle samples:
   * a bench that idles its process for longer than that after start-up leaves the start-up out.
   */
  afterIdleGapMs?: number;
}

/**
 * Busy (non-idle) time of one or more profiles, summed by the key that `keyerOf(profile)` gives
 * each sample's node, highest first, as shares of the busy time.
 */
function busyTimeBy(files: readonly string[], keyerOf: (profile: CpuProfile, byId: Map<number, ProfileNode>) => (id: number) => string, options: SelfTimeOptions): SelfTime[] {
  const totals = new Map<string, number>();
  let busy = 0;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const keyOf = keyerOf(profile, byId);
    let counting = options.afterIdleGapMs === undefined;
    let idleRun = 0;
    profile.samples.forEach((id, i) => {
      const frame = byId.get(id)?.callFrame;
      const micros = profile.timeDeltas[i + 1] ?? 0;
      if (!frame || frame.functionName === '(idle)') {
        idleRun += micros;
        if (!counting && idleRun >= (options.afterIdleGapMs ?? 0) * 1_000) counting = true;
        return;
      }
      idleRun = 0;
      if (!counting) return;
      const key = keyOf(id);
      totals.set(key, (totals.get(key) ?? 0) + micros);
      busy += micros;
    });
  }
  return [...totals.entries()].map(([key, micros]) => ({ key, ms: micros / 1_000, share: micros / busy })).sort((a, b) => b.ms - a.ms);
}

/** Self time of one or more profiles by `keyOf(frame)`, highest first, as shares of the busy (non-idle) time. */
function selfTime(files: readonly string[], keyOf: (url: string, functionName: string, line: number) => string, options: SelfTimeOptions): SelfTime[] {
  return busyTimeBy(
    files,
    (_profile, byId) => (id) => {
      const { url, functionName, lineNumber } = byId.get(id)!.callFrame;
      return keyOf(url, functionName, lineNumber ?? 0);
    },
    options,
  );
}

/** Self time by package, highest first, as shares of the sampled time (idle excluded). */
export function selfTimeByOwner(file: string): { owner: string; ms: number; share: number }[] {
  return selfTime([file], owner, {}).map((t) => ({ owner: t.key, ms: t.ms, share: t.share }));
}

/** Self time by package over several profiles (e.g. every worker of a run). */
export function selfTimeByPackage(files: readonly string[], options: SelfTimeOptions = {}): SelfTime[] {
  return selfTime(files, owner, options);
}

/** Self time by function (`name (package, file:line)`), over several profiles. */
export function selfTimeByFunction(files: readonly string[], options: SelfTimeOptions = {}): SelfTime[] {
  return selfTime(
    files,
    (url, functionName, line) => {
      const file = url.slice(url.lastIndexOf('/') + 1);
      return `${functionName || '(anonymous)'} (${owner(url, functionName)}${file ? `, ${file}:${line + 1}` : ''})`;
    },
    options,
  );
}

/** A named part of a process's work: a sample belongs to it when a frame of its stack matches. */
export interface ProfilePart {
  name: string;
  /** Tested against `functionName package file:line` of each frame. */
  frame: RegExp;
}

/**
 * Busy time split into `parts`: each sample goes to the part of its innermost frame that matches
 * any part (parts are tried in the order given for that frame), else to `other`. Shares of the
 * busy (non-idle) time, highest first.
 */
export function timeByPart(files: readonly string[], parts: readonly ProfilePart[], options: SelfTimeOptions = {}, other = 'other'): SelfTime[] {
  return busyTimeBy(
    files,
    (profile, byId) => {
      const parentOf = new Map<number, number>();
      for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
      const partOfNode = new Map<number, string>();
      const partOf = (id: number): string => {
        const known = partOfNode.get(id);
        if (known !== undefined) return known;
        const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
        const label = `${functionName || '(anonymous)'} ${owner(url, functionName)} ${url.slice(url.lastIndexOf('/') + 1)}:${(lineNumber ?? 0) + 1}`;
        const parent = parentOf.get(id);
        const part = parts.find((p) => p.frame.test(label))?.name ?? (parent === undefined ? other : partOf(parent));
        partOfNode.set(id, part);
        return part;
      };
      return partOf;
    },
    options,
  );
}

/**
 * The two tables a profiled bench prints: self time by package (the top `packages`) and by
 * function (the top `functions`), each as CPU per `unit` (`perUnit(share)`) and as a share.
 */
export function selfTimeTables(
  files: readonly string[],
  options: SelfTimeOptions,
  unit: string,
  perUnit: (share: number) => string,
  top: { packages: number; functions: number },
): string {
  const rows = (times: SelfTime[], n: number) => times.slice(0, n).map((t) => [t.key, perUnit(t.share), `${fixed(t.share * 100, 1)} %`]);
  return (
    table(['package / part', `µs per ${unit}`, 'share'], rows(selfTimeByPackage(files, options), top.packages)) +
    '\n\n' +
    table(['function (package, file:line)', `µs per ${unit}`, 'share'], rows(selfTimeByFunction(files, options), top.functions))
  );
}
