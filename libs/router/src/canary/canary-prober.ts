import type { Logger } from '@switchyard/observability';
import type { CanariesConfig, CanaryCase, TargetConfig } from '../config/router-config.schema';
import { resolveApiKey, type SecretResolver } from '../providers/api-key';
import { LiveInterval } from '../timing/live-interval';
import { judgeCanary, type CanaryCaseResult } from './canary-verdict';

/** Where canary rounds go (the Router). */
export interface CanarySink {
  readonly config: { readonly config: { readonly canaries: CanariesConfig | null; readonly targets: readonly TargetConfig[] } };
  recordCanaryRound(target: string, results: readonly CanaryCaseResult[]): void;
}

export interface CanaryProberOptions {
  secrets: SecretResolver;
  logger: Logger;
  /** How a target is reached (the way its calls go). Default: the global fetch. */
  fetchFor?: (target: TargetConfig) => typeof fetch;
}

/** The cases a target is asked: those in a language it serves (all of them when it names none). */
export function casesFor(target: TargetConfig, cases: readonly CanaryCase[]): CanaryCase[] {
  const languages = target.languages;
  if (languages === undefined) return [...cases];
  return cases.filter((testCase) => languages.some((language) => testCase.language === language || testCase.language.startsWith(`${language}-`)));
}

/**
 * Business canary probes (seed 004 §4.1): every `canaries.interval_s` each target gets the
 * cases in its languages, one after another, as plain chat completions at temperature 0; each
 * reply is judged (`judgeCanary`) and the round goes to the sink. The interval is read from the
 * live config before each round, so a reload takes effect from the next one. Timers are unref'd.
 */
export class CanaryProber {
  private readonly interval: LiveInterval;

  constructor(
    private readonly sink: CanarySink,
    private readonly options: CanaryProberOptions,
  ) {
    // Without canaries in the config, look again in a minute: a reload may add them.
    this.interval = new LiveInterval(
      () => (sink.config.config.canaries === null ? 60_000 : sink.config.config.canaries.interval_s * 1000),
      () => this.runRound(),
      (error) => options.logger.error({ err: error }, 'canary round failed'),
    );
  }

  start(): void {
    this.interval.start();
  }

  stop(): void {
    this.interval.stop();
  }

  /** One round over every target; never throws. */
  async runRound(): Promise<void> {
    const canaries = this.sink.config.config.canaries;
    if (canaries === null) return;
    await Promise.all(
      this.sink.config.config.targets.map(async (target) => {
        const cases = casesFor(target, canaries.cases);
        if (cases.length === 0) return;
        const results: CanaryCaseResult[] = [];
        for (const testCase of cases) results.push(await this.runCase(target, testCase, canaries));
        this.sink.recordCanaryRound(target.name, results);
      }),
    );
  }

  async runCase(target: TargetConfig, testCase: CanaryCase, canaries: CanariesConfig): Promise<CanaryCaseResult> {
    const failed = (error: string): CanaryCaseResult => ({ case: testCase.name, language: testCase.language, error });
    const apiKey = resolveApiKey(target, this.options.secrets);
    if (apiKey === undefined) return failed('no API key');
    const fetchFn = this.options.fetchFor?.(target) ?? fetch;
    try {
      const response = await fetchFn(`${target.endpoint.replace(/\/+$/, '')}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-switchyard-probe': 'canary', 'x-switchyard-canary': testCase.name },
        body: JSON.stringify({ model: target.model, messages: [{ role: 'user', content: testCase.prompt }], temperature: 0, max_tokens: canaries.max_tokens }),
        signal: AbortSignal.timeout(canaries.timeout_ms),
      });
      const body = await response.text();
      if (!response.ok) return failed(`HTTP ${response.status}`);
      const content = replyContent(body);
      if (content === undefined) return failed('the answer is not a chat completion');
      return judgeCanary(testCase, content);
    } catch (error) {
      return failed(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    }
  }
}

function replyContent(body: string): string | undefined {
  try {
    const content = (JSON.parse(body) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
    return typeof content === 'string' ? content : undefined;
  } catch {
    return undefined;
  }
}
