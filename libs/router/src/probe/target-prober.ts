import type { Logger } from '@switchyard/observability';
import type { UpstreamErrorClass } from '../calls/upstream-error';
import { classifyStatus, isModelLoading } from '../calls/upstream-error';
import type { TargetConfig } from '../config/router-config.schema';
import { resolveApiKey, type SecretResolver } from '../providers/api-key';

/** What a probe found. A cold start (model still loading, not up yet since boot) is not a failure. */
export type ProbeKind = 'liveness' | 'inference';

export type ProbeResult = { ok: true; latencyMs: number } | { ok: false; coldStart: true; latencyMs: number } | { ok: false; coldStart: false; failure: UpstreamErrorClass; latencyMs: number };

/** Where probe results go (the Router). */
export interface ProbeSink {
  readonly config: { readonly targets: readonly TargetConfig[] };
  recordProbe(target: string, result: { ok: boolean; coldStart?: boolean; failure?: UpstreamErrorClass; latencyMs: number; kind?: ProbeKind }): void;
}

export interface ProberOptions {
  livenessIntervalMs: number;
  inferenceIntervalMs: number;
  timeoutMs: number;
  secrets: SecretResolver;
  logger: Logger;
  /** How a target is reached (the same way its calls go, e.g. through an egress proxy). Default: the global fetch. */
  fetchFor?: (target: TargetConfig) => typeof fetch;
}

/**
 * Active health probes (SPEC §3.8): `GET <endpoint>/models` every liveness interval, a
 * 1-token completion every inference interval. A target that has never answered since
 * boot and refuses connections, or answers 503 "loading", is cold-starting, not failing.
 * Timers are unref'd; `stop()` ends them.
 */
export class TargetProber {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly seenUp = new Set<string>();

  constructor(
    private readonly sink: ProbeSink,
    private readonly options: ProberOptions,
  ) {}

  start(): void {
    if (this.timers.length > 0) return;
    const every = (ms: number, run: () => Promise<void>) => {
      const timer = setInterval(() => void run(), ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(this.options.livenessIntervalMs, () => this.probeAll('liveness'));
    every(this.options.inferenceIntervalMs, () => this.probeAll('inference'));
  }

  stop(): void {
    for (const timer of this.timers.splice(0)) clearInterval(timer);
  }

  /** One round over every target; results go to the sink. Never throws. */
  async probeAll(kind: 'liveness' | 'inference'): Promise<void> {
    await Promise.all(
      this.sink.config.targets.map(async (target) => {
        const result = await this.probe(target, kind);
        this.sink.recordProbe(target.name, { ...result, kind });
        if (!result.ok && !result.coldStart) this.options.logger.warn({ target: target.name, kind, failure: result.failure }, 'probe failed');
      }),
    );
  }

  async probe(target: TargetConfig, kind: 'liveness' | 'inference'): Promise<ProbeResult> {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    const apiKey = resolveApiKey(target, this.options.secrets);
    if (apiKey === undefined) return { ok: false, coldStart: false, failure: 'auth', latencyMs: 0 };
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, 'x-switchyard-probe': kind };
    const base = target.endpoint.replace(/\/+$/, '');
    const fetchFn = this.options.fetchFor?.(target) ?? fetch;
    try {
      const response =
        kind === 'liveness'
          ? await fetchFn(`${base}/models`, { headers, signal: AbortSignal.timeout(this.options.timeoutMs) })
          : await fetchFn(`${base}/chat/completions`, {
              method: 'POST',
              headers: { ...headers, 'content-type': 'application/json' },
              body: JSON.stringify({ model: target.model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 }),
              signal: AbortSignal.timeout(this.options.timeoutMs),
            });
      const body = await response.text();
      if (response.ok) {
        this.seenUp.add(target.name);
        return { ok: true, latencyMs: latency() };
      }
      if (isModelLoading(response.status, body)) return { ok: false, coldStart: true, latencyMs: latency() };
      return { ok: false, coldStart: false, failure: classifyStatus(response.status), latencyMs: latency() };
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      if (!timedOut && !this.seenUp.has(target.name)) return { ok: false, coldStart: true, latencyMs: latency() };
      return { ok: false, coldStart: false, failure: timedOut ? 'timeout' : 'network', latencyMs: latency() };
    }
  }
}
