import type { Clock } from '../clock';

/** What one process knows of one target's health: its score and its passive window's aggregates. */
export interface TargetHealthReport {
  target: string;
  /** Health score 0..100. */
  score: number;
  /** Attempts in the passive window (within `health.window_ms`). */
  requests: number;
  failures: number;
  /** Mean first-token latency of the window's successes, and how many samples it averages. */
  firstTokenMeanMs: number | null;
  firstTokenSamples: number;
}

/** One process's health reports, as published with its fleet snapshot. */
export interface PeerHealthReport {
  processId: string;
  /** Epoch ms of the report, by the reporter's clock. */
  reportedAt: number;
  targets: readonly TargetHealthReport[];
}

/** What routing scores a target on. */
export interface MergedTargetHealth {
  score: number;
  firstTokenMeanMs: number | null;
}

/**
 * This process's view of a target merged with its peers' (SPEC §3.3 over the fleet):
 *
 * - The score is the minimum over this process and every peer with fresh evidence. Every
 *   process calls the same upstream, so one that has just seen it fail knows something the
 *   others will otherwise learn by failing too; an average would dilute a dead upstream among
 *   the processes that have not called it yet (they sit at 100).
 * - A peer counts only if its report is younger than `maxAgeMs` and its window holds attempts:
 *   a process that stopped calling the target (or stopped reporting) has no current opinion, so
 *   a low score it kept from old failures cannot hold the target down for the whole fleet.
 * - The first-token mean is the sample-weighted mean of every window: latency is a property of
 *   the upstream, best estimated from all the samples, not from the slowest process.
 */
export function mergeTargetHealth(
  own: Pick<TargetHealthReport, 'score' | 'firstTokenMeanMs' | 'firstTokenSamples'>,
  peers: readonly { reportedAt: number; health: TargetHealthReport }[],
  now: number,
  maxAgeMs: number,
): MergedTargetHealth {
  let score = own.score;
  let firstTokenSum = own.firstTokenMeanMs === null ? 0 : own.firstTokenMeanMs * own.firstTokenSamples;
  let firstTokenSamples = own.firstTokenMeanMs === null ? 0 : own.firstTokenSamples;
  for (const peer of peers) {
    if (now - peer.reportedAt > maxAgeMs || peer.health.requests === 0) continue;
    score = Math.min(score, peer.health.score);
    if (peer.health.firstTokenMeanMs !== null && peer.health.firstTokenSamples > 0) {
      firstTokenSum += peer.health.firstTokenMeanMs * peer.health.firstTokenSamples;
      firstTokenSamples += peer.health.firstTokenSamples;
    }
  }
  return { score, firstTokenMeanMs: firstTokenSamples === 0 ? null : firstTokenSum / firstTokenSamples };
}

/**
 * The peers' latest health reports, held for routing. The fleet snapshot reader replaces them
 * every few seconds; reads merge them with this process's live state (`mergeTargetHealth`).
 */
export class FleetHealthBoard {
  private byTarget = new Map<string, { reportedAt: number; health: TargetHealthReport }[]>();
  private maxAgeMs = 15_000;

  constructor(private readonly clock: Clock) {}

  /** The peers' reports now (this process's own report, if among them, is left out by the caller). */
  replace(reports: readonly PeerHealthReport[], maxAgeMs: number): void {
    const next = new Map<string, { reportedAt: number; health: TargetHealthReport }[]>();
    for (const report of reports) {
      for (const health of report.targets) {
        const list = next.get(health.target) ?? [];
        list.push({ reportedAt: report.reportedAt, health });
        next.set(health.target, list);
      }
    }
    this.byTarget = next;
    this.maxAgeMs = maxAgeMs;
  }

  merged(target: string, own: Pick<TargetHealthReport, 'score' | 'firstTokenMeanMs' | 'firstTokenSamples'>): MergedTargetHealth {
    const peers = this.byTarget.get(target);
    if (peers === undefined) return { score: own.score, firstTokenMeanMs: own.firstTokenMeanMs };
    return mergeTargetHealth(own, peers, this.clock.now(), this.maxAgeMs);
  }
}
