import { request } from 'undici';
import type { Logger } from '@switchyard/observability';
import type { ScheduleTimer } from '../calls/hedge-race';
import type { Clock } from '../clock';
import type { RouterConfig } from '../config/router-config.schema';
import { redactUrl } from '../config/redact-url';
import type { TargetStateRegistry } from '../state/target-state';
import { NetworkFaultJudge, type NetworkState, type NetworkTransition } from './network-fault-judge';

/** Whether `url` answers at all within `timeoutMs` (any HTTP status: the network works). */
export type KnownGoodProbe = (url: string, timeoutMs: number) => Promise<boolean>;

export const httpKnownGoodProbe: KnownGoodProbe = async (url, timeoutMs) => {
  try {
    const reply = await request(url, { method: 'GET', signal: AbortSignal.timeout(timeoutMs) });
    await reply.body.dump();
    return true;
  } catch {
    return false;
  }
};

export interface NetworkStatus {
  state: NetworkState;
  /** ISO time the current fault or check began; null when all is well. */
  since: string | null;
  knownGood: string | null;
  /** Alerts raised by this process (one per outage of its own network). */
  alerts: number;
  /** For the admin view's banner; null when all is well. */
  banner: string | null;
}

/** Charges held while the judge decides, capped: an outage of ours must not grow memory without bound. */
const MAX_HELD = 1_000;

/**
 * The I/O side of "is it me or them": holds the targets' connect failures while the
 * known-good endpoint is checked (`network_check`), charges them when it answers, and when it
 * does not raises one alert (an error log line with `alert: local_network_fault`, the metric,
 * the `/admin/targets` banner), forgives the targets what the outage cost them and re-checks
 * every `recheck_ms` until the network is back. Off (charges go straight through) without a
 * `known_good_url`.
 */
export class NetworkSelfCheck {
  private readonly judge: NetworkFaultJudge;
  private held: (() => void)[] = [];
  private checking = false;
  private cancelRecheck: (() => void) | undefined;
  alerts = 0;

  constructor(
    private readonly options: {
      config: () => RouterConfig;
      states: TargetStateRegistry;
      logger: Logger;
      clock: Clock;
      timer: ScheduleTimer;
      probe: KnownGoodProbe;
    },
  ) {
    // The window is set from the live config on every failure (hot reload).
    this.judge = new NetworkFaultJudge(10_000);
  }

  /** A target failed to connect: `charge` now, or later once the check says it was the target's fault. */
  connectFailure(target: string, charge: () => void): void {
    const settings = this.options.config();
    if (settings.network_check.known_good_url === undefined) {
      charge();
      return;
    }
    this.judge.setWindow(settings.network_check.window_ms);
    const verdict = this.judge.connectFailure(target, this.options.clock.now(), settings.targets.length);
    if (verdict === 'charge') {
      charge();
      return;
    }
    if (this.held.length < MAX_HELD) this.held.push(charge);
    if (verdict === 'check') void this.check();
  }

  /** An upstream answered (hot path: one comparison when all is well). */
  success(): void {
    if (this.judge.state === 'ok') {
      this.judge.success(this.options.clock.now());
      return;
    }
    this.apply(this.judge.success(this.options.clock.now()));
  }

  status(): NetworkStatus {
    const url = this.options.config().network_check.known_good_url;
    const since = this.judge.since;
    const knownGood = url === undefined ? null : redactUrl(url);
    return {
      state: this.judge.state,
      since: since === undefined ? null : new Date(since).toISOString(),
      knownGood,
      alerts: this.alerts,
      banner:
        this.judge.state === 'local_fault'
          ? `This process cannot reach its model targets nor the known-good endpoint ${knownGood}: the fault is on our side (network, DNS, proxy), not the targets'. Their breakers are left closed; calls resume when the network is back.`
          : null,
    };
  }

  stop(): void {
    this.cancelRecheck?.();
    this.cancelRecheck = undefined;
  }

  private async check(): Promise<void> {
    if (this.checking) return;
    const settings = this.options.config().network_check;
    if (settings.known_good_url === undefined) return;
    this.checking = true;
    let reachable: boolean;
    try {
      reachable = await this.options.probe(settings.known_good_url, settings.timeout_ms);
    } finally {
      this.checking = false;
    }
    this.apply(this.judge.checked(reachable, this.options.clock.now()));
  }

  private apply(transition: NetworkTransition): void {
    const { logger, clock } = this.options;
    const knownGood = this.status().knownGood;
    if (transition === 'remote') {
      const held = this.held;
      this.held = [];
      for (const charge of held) charge();
      logger.warn({ known_good_url: knownGood, charged: held.length }, 'network check: the known-good endpoint answers, so the targets are failing, not us; their failures are charged');
      return;
    }
    if (transition === 'local_fault') {
      this.held = [];
      const now = clock.now();
      const forgiven = this.judge.recentlyFailed(now).filter((name) => this.options.states.get(name)?.forgiveNetworkOutage(now));
      this.alerts += 1;
      logger.error(
        { alert: 'local_network_fault', known_good_url: knownGood, targets_failing: this.judge.recentlyFailed(now), forgiven },
        'network check: every target and the known-good endpoint fail to connect: the fault is ours, not the targets\'; no breaker is opened for it',
      );
      this.scheduleRecheck();
      return;
    }
    if (transition === 'recovered') {
      this.stop();
      logger.warn({ known_good_url: knownGood }, 'network check: the network is back; targets take traffic again at once (they were never charged for the outage)');
    }
  }

  private scheduleRecheck(): void {
    this.stop();
    this.cancelRecheck = this.options.timer(this.options.config().network_check.recheck_ms, () => {
      this.cancelRecheck = undefined;
      void this.recheck();
    });
  }

  private async recheck(): Promise<void> {
    await this.check();
    if (this.judge.state === 'local_fault') this.scheduleRecheck();
  }
}
