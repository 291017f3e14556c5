import { looksLikeJsonObject } from '@switchyard/router';
import { ModelSummarySchema, type ModelSummary, type RequestMeta, type RouteRecord, type StructuredSummary } from '@switchyard/contracts';
import { modelCallKey } from './model-call-headers';
import type { ChatMessage, ModelAttempt, ModelCallContext, ModelRouter } from './model-router.port';

/**
 * The readings of a model reply that may hold its JSON, in order: the whole reply, the inside
 * of a Markdown fence, and the span from the first `{` to the last `}` (models often wrap JSON
 * in a fence or add a sentence around it).
 */
export function jsonReadings(content: string): string[] {
  const readings = [content.trim()];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(content);
  if (fenced?.[1]) readings.push(fenced[1].trim());
  const start = content.indexOf('{');
  const end = content.lastIndexOf('}');
  if (start >= 0 && end > start) readings.push(content.slice(start, end + 1));
  return readings;
}

/** The parsed value of each reading that is JSON, in the order of `jsonReadings`. */
export function* parsedJsonReadings(content: string): Generator<unknown> {
  for (const reading of jsonReadings(content)) {
    try {
      yield JSON.parse(reading) as unknown;
    } catch {
      // not JSON: try the next reading
    }
  }
}

/** Reads a model reply as the structured summary: the first reading that is one. */
export function parseModelSummary(content: string): ModelSummary | null {
  for (const value of parsedJsonReadings(content)) {
    const parsed = ModelSummarySchema.safeParse(value);
    if (parsed.success) return parsed.data;
  }
  return null;
}

export interface SummaryCall {
  meta: RequestMeta;
  messages: ChatMessage[];
  step: number;
  maxTokens?: number;
  headers: Record<string, string>;
  context: ModelCallContext;
  signal: AbortSignal;
}

export interface SummaryCallResult {
  summary: StructuredSummary;
  raw: string;
  routes: RouteRecord[];
  costUsd: number;
}

/** Upstream attempts of one step as `route_targets` records. */
export function routesFromAttempts(step: number, attempts: readonly ModelAttempt[]): RouteRecord[] {
  return attempts.map((a) => ({
    step,
    target: a.target,
    model: a.model,
    rule: a.rule,
    outcome: a.outcome,
    latency_ms: Math.round(a.latencyMs),
    ...(a.errorClass ? { error: a.errorClass } : {}),
  }));
}

/**
 * One model call that must yield the structured summary. A reply that does not parse is
 * a "bad output" of that target: the call is retried once elsewhere, and if that fails
 * too, the raw text is kept as the conclusion with `confidence: null` (SPEC §4).
 */
export async function callForSummary(router: ModelRouter, call: SummaryCall): Promise<SummaryCallResult> {
  const key = (n: number) => modelCallKey(call.context.taskId, call.context.step, n);
  const first = await router.chat({
    meta: call.meta,
    messages: call.messages,
    jsonMode: true,
    temperature: 0,
    idempotencyKey: key(1),
    headers: { ...call.headers, 'x-switchyard-attempt': '1', 'x-switchyard-idempotency-key': key(1) },
    context: call.context,
    signal: call.signal,
    ...(call.maxTokens ? { maxTokens: call.maxTokens } : {}),
  });
  const routes = routesFromAttempts(call.step, first.attempts);
  const parsed = parseModelSummary(first.content);
  if (parsed) return { summary: parsed, raw: first.content, routes, costUsd: first.costUsd };

  markLastAsBadOutput(routes);
  // A reply that is not JSON at all the router already counted; a JSON object of the wrong
  // shape only the agent can tell. A reused answer was judged when it was first paid for.
  if (!first.reused && looksLikeJsonObject(first.content)) router.reportBadOutput?.(first.target);
  let retry;
  try {
    retry = await router.chat({
      meta: call.meta,
      messages: call.messages,
      jsonMode: true,
      temperature: 0,
      excludeTargets: [first.target],
      idempotencyKey: key(2),
      headers: { ...call.headers, 'x-switchyard-attempt': '2', 'x-switchyard-idempotency-key': key(2) },
      context: call.context,
      signal: call.signal,
      ...(call.maxTokens ? { maxTokens: call.maxTokens } : {}),
    });
  } catch (error) {
    if (call.signal.aborted) throw error;
    // No other target could answer: the first reply's text is all there is.
    return { summary: rawSummary(first.content), raw: first.content, routes, costUsd: first.costUsd };
  }
  const retryRoutes = routesFromAttempts(call.step, retry.attempts);
  const reparsed = parseModelSummary(retry.content);
  if (!reparsed) {
    markLastAsBadOutput(retryRoutes);
    if (!retry.reused && looksLikeJsonObject(retry.content)) router.reportBadOutput?.(retry.target);
  }
  return {
    summary: reparsed ?? rawSummary(retry.content),
    raw: retry.content,
    routes: [...routes, ...retryRoutes],
    costUsd: first.costUsd + retry.costUsd,
  };
}

function markLastAsBadOutput(routes: RouteRecord[]): void {
  const last = routes.at(-1);
  if (last) last.outcome = 'bad_output';
}

function rawSummary(text: string): StructuredSummary {
  return { conclusion: text, evidence: [], confidence: null };
}
