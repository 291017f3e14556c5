import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '@switchyard/observability';
import type { CallLog, CallOutcome, CallRecord, CallStatus, NewCall, OutcomeCounts } from './call-log';
import { ChatCompletionRequestSchema, type ChatCompletionRequest } from './chat-request.schema';
import { decide, type FaultDecision, faultStateFor, initialFaultState, isHealthy, type FaultMode, type ModeChange, remainingInWindow } from './fault-state';
import { BodyTooLargeError, closeServer, isGone, listen, pickPrefixedHeaders, readBody, requestPath, sendJson } from './http-io';
import {
  injectedRateLimit,
  injectedServerError,
  internalError,
  invalidRequest,
  methodNotAllowed,
  modelNotFound,
  type OpenAIErrorBody,
  routeNotFound,
} from './openai-errors';
import { planReply, type ReplyPlan } from './reply-plan';
import { garbageContent, lastUserMessage, summaryContent, totalMessageChars, wrongContent } from './reply-synthesis';
import { PlanFaults, invalidPlanFor, planFor, requestedPlanRoles } from './plan-reply';
import { requestedSchema, schemaContent } from './schema-reply';
import { delayUnlessGone } from './response-delay';
import type { TargetConfig } from './sim-config';
import { completionObject, SSE_DONE, sseFrame, streamChunks, usageFor } from './sse-chunks';
import { estimateTokens } from './token-estimate';
import { firstIssue } from './zod-issues';

export const RECORDED_HEADER_PREFIX = 'x-switchyard-';
const PREVIEW_CHARS = 200;
const MAX_SLOW_CHUNK_GAP_MS = 250;

export interface TargetSnapshot {
  name: string;
  port: number;
  model: string;
  latency_ms: number;
  mode: FaultMode;
  params: { delay_ms: number; retry_after_s: number; fail_ratio: number; count: number | null; remaining: number | null };
  listening: boolean;
  healthy: boolean;
  calls: OutcomeCounts;
  /** Chat requests open right now, and the most ever open at once (reset with the call log's counts). */
  in_flight: number;
  peak_concurrency: number;
}

export interface TargetServerDeps {
  host: string;
  callLog: CallLog;
  logger: Logger;
  /** Shared by every target: the planner re-ask drill. */
  planFaults?: PlanFaults;
}

type CallFields = Omit<NewCall, 'status' | 'outcome'>;

const OUTCOME_BY_DECISION: Record<FaultDecision['kind'], { status: CallStatus; outcome: CallOutcome }> = {
  ok: { status: 200, outcome: 'ok' },
  slow: { status: 200, outcome: 'ok' },
  garbage: { status: 200, outcome: 'garbage' },
  wrong: { status: 200, outcome: 'wrong' },
  error: { status: 500, outcome: 'error' },
  ratelimit: { status: 429, outcome: 'ratelimit' },
  hang: { status: 'hang', outcome: 'hang' },
  refused: { status: 'refused', outcome: 'error' },
};

/** A slow stream also trickles, as an overloaded server does, without multiplying the delay. */
export function slowChunkGapMs(delayMs: number): number {
  return Math.min(Math.round(delayMs / 10), MAX_SLOW_CHUNK_GAP_MS);
}

/** The fields besides the conversation that reach this upstream (stop, seed, tools, …), as sent, for the call log. */
const NOT_RECORDED = new Set(['messages', 'model', 'stream']);
function passedParams(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([key]) => !NOT_RECORDED.has(key)));
}

/** Best-effort fields of a body that failed validation, so the call log still says what came in. */
function looseFields(json: unknown): { model: string; stream: boolean } {
  if (typeof json !== 'object' || json === null) return { model: '', stream: false };
  const { model, stream } = json as Record<string, unknown>;
  return { model: typeof model === 'string' ? model : '', stream: stream === true };
}

/**
 * One OpenAI-compatible upstream on its own port. Mode changes and start/stop are queued,
 * so `down` then `ok` in quick succession closes and re-opens the port in that order.
 */
export class TargetServer {
  private server: Server | null = null;
  private fault = initialFaultState();
  private port: number;
  private stopped = false;
  private transitions: Promise<unknown> = Promise.resolve();
  private inFlight = 0;
  private peakConcurrency = 0;

  constructor(
    readonly config: TargetConfig,
    private readonly deps: TargetServerDeps,
  ) {
    this.port = config.port;
  }

  get name(): string {
    return this.config.name;
  }

  start(): Promise<number> {
    return this.enqueue(() => this.openPort());
  }

  stop(): Promise<void> {
    this.stopped = true;
    return this.enqueue(() => this.closePort());
  }

  setMode(change: ModeChange): Promise<TargetSnapshot> {
    return this.enqueue(async () => {
      const next = faultStateFor(change);
      if (change.mode === 'down') {
        this.fault = next;
        await this.closePort();
      } else {
        if (this.server === null && !this.stopped) await this.openPort();
        this.fault = next;
      }
      const snapshot = this.snapshot();
      this.deps.logger.info({ target: this.name, mode: snapshot.mode, params: snapshot.params }, 'target mode changed');
      return snapshot;
    });
  }

  snapshot(): TargetSnapshot {
    const { settings } = this.fault;
    return {
      name: this.name,
      port: this.port,
      model: this.config.model,
      latency_ms: this.config.latencyMs,
      mode: settings.mode,
      params: {
        delay_ms: settings.delay_ms,
        retry_after_s: settings.retry_after_s,
        fail_ratio: settings.fail_ratio,
        count: settings.count,
        remaining: remainingInWindow(this.fault),
      },
      listening: this.server !== null,
      healthy: isHealthy(this.fault),
      calls: this.deps.callLog.countsFor(this.name),
      in_flight: this.inFlight,
      peak_concurrency: this.peakConcurrency,
    };
  }

  /** Forgets the peak (the control API's reset and clear of the call log). */
  resetPeak(): void {
    this.peakConcurrency = this.inFlight;
  }

  private enqueue<T>(step: () => Promise<T>): Promise<T> {
    const run = this.transitions.then(step);
    // The caller gets `run` and its failure; the queue only needs to know the step is over.
    this.transitions = run.catch(() => undefined);
    return run;
  }

  private async openPort(): Promise<number> {
    const server = createServer((req, res) => this.onRequest(req, res));
    server.on('error', (error) => this.deps.logger.error({ err: error, target: this.name }, 'target server error'));
    this.port = await listen(server, this.port, this.deps.host);
    this.server = server;
    return this.port;
  }

  private async closePort(): Promise<void> {
    const server = this.server;
    if (server === null) return;
    this.server = null;
    await closeServer(server);
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const path = requestPath(req);
    if (path === '/v1/chat/completions') {
      if (req.method !== 'POST') {
        sendJson(res, 405, methodNotAllowed(req.method ?? '', path), { allow: 'POST' });
        return;
      }
      this.inFlight += 1;
      this.peakConcurrency = Math.max(this.peakConcurrency, this.inFlight);
      res.once('close', () => {
        this.inFlight -= 1;
      });
      this.handleChat(req, res).catch((error: unknown) => this.onHandlerError(error, res));
      return;
    }
    if (req.method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, { object: 'list', data: [{ id: this.config.model, object: 'model', created: 0, owned_by: 'llm-sim' }] });
      return;
    }
    if (req.method === 'GET' && path === '/health') {
      if (isHealthy(this.fault)) sendJson(res, 200, { status: 'ok' });
      else sendJson(res, 503, { status: 'unhealthy', mode: this.fault.settings.mode });
      return;
    }
    sendJson(res, 404, routeNotFound(req.method ?? '', path));
  }

  private async handleChat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const traceparent = req.headers.traceparent;
    const base = {
      target: this.name,
      at: new Date().toISOString(),
      headers: pickPrefixedHeaders(req.headers, RECORDED_HEADER_PREFIX),
      ...(typeof traceparent === 'string' ? { traceparent } : {}),
    };
    let raw: string;
    try {
      raw = await readBody(req);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      this.record({ ...base, model: '', stream: false, message_chars: 0, last_user_message_preview: '' }, 413, 'error');
      res.setHeader('connection', 'close');
      sendJson(res, 413, invalidRequest(error.message));
      return;
    }

    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      this.record({ ...base, model: '', stream: false, message_chars: 0, last_user_message_preview: '' }, 400, 'error');
      await this.sendError(res, 400, invalidRequest(`We could not parse the JSON body of your request: ${error.message}`));
      return;
    }

    const parsed = ChatCompletionRequestSchema.safeParse(json);
    if (!parsed.success) {
      const issue = firstIssue(parsed.error);
      this.record({ ...base, ...looseFields(json), message_chars: 0, last_user_message_preview: '' }, 400, 'error');
      await this.sendError(res, 400, invalidRequest(issue.message, issue.param));
      return;
    }

    const body = parsed.data;
    const userText = lastUserMessage(body.messages);
    const fields: CallFields = {
      ...base,
      params: passedParams(json as Record<string, unknown>),
      model: body.model,
      stream: body.stream === true,
      message_chars: totalMessageChars(body.messages),
      last_user_message_preview: userText.slice(0, PREVIEW_CHARS),
    };
    if (body.model !== this.config.model) {
      this.record(fields, 404, 'error');
      await this.sendError(res, 404, modelNotFound(body.model));
      return;
    }

    const { decision, next } = decide(this.fault);
    this.fault = next;
    const { status, outcome } = OUTCOME_BY_DECISION[decision.kind];
    const call = this.record(fields, status, outcome);
    const seq = call.seq;
    res.once('close', () => {
      if (!res.writableFinished) call.client_gone = true;
    });

    switch (decision.kind) {
      case 'refused':
        req.socket.destroy();
        return;
      case 'hang':
        // Left open on purpose; closeServer() destroys the socket when the target goes down or stops.
        return;
      case 'error':
        await this.sendError(res, 500, injectedServerError(this.name));
        return;
      case 'ratelimit':
        await this.sendError(res, 429, injectedRateLimit(this.name, decision.retryAfterS), { 'retry-after': String(decision.retryAfterS) });
        return;
      case 'garbage':
        await this.answer(res, body, fields.message_chars, garbageContent(this.name, userText), seq, 0, 0);
        return;
      case 'wrong':
        await this.answer(res, body, fields.message_chars, wrongContent(this.replyContent(body, userText)), seq, 0, 0);
        return;
      case 'slow':
        await this.answer(res, body, fields.message_chars, this.replyContent(body, userText), seq, decision.delayMs, slowChunkGapMs(decision.delayMs));
        return;
      case 'ok':
        await this.answer(res, body, fields.message_chars, this.replyContent(body, userText), seq, 0, 0);
        return;
    }
  }

  /** A planner request gets a coherent plan; a json_schema request JSON matching its schema; anything else the structured summary. */
  private replyContent(body: ChatCompletionRequest, userText: string): string {
    const planRoles = requestedPlanRoles(body.response_format);
    if (planRoles) return JSON.stringify(this.deps.planFaults?.takeInvalid() ? invalidPlanFor(planRoles) : planFor(planRoles, userText));
    const schema = requestedSchema(body.response_format);
    return schema ? schemaContent(schema, this.name, userText) : summaryContent(this.name, userText);
  }

  private record(fields: CallFields, status: CallStatus, outcome: CallOutcome): CallRecord {
    const record = this.deps.callLog.append({ ...fields, status, outcome, concurrent: this.inFlight });
    this.deps.logger.debug({ target: this.name, seq: record.seq, status, outcome, stream: fields.stream }, 'chat completion');
    return record;
  }

  private async sendError(res: ServerResponse, status: number, body: OpenAIErrorBody, headers: Record<string, string> = {}): Promise<void> {
    if (!(await delayUnlessGone(this.config.latencyMs, res))) return;
    sendJson(res, status, body, headers);
  }

  private async answer(
    res: ServerResponse,
    body: ChatCompletionRequest,
    promptChars: number,
    content: string,
    seq: number,
    extraDelayMs: number,
    chunkGapMs: number,
  ): Promise<void> {
    if (!(await delayUnlessGone(this.config.latencyMs + extraDelayMs, res))) return;
    const identity = { id: `chatcmpl-llmsim-${seq}`, created: Math.floor(Date.now() / 1000), model: this.config.model };
    const plan = planReply(body, content, seq);
    const plans: ReplyPlan[] = Array.from({ length: body.n ?? 1 }, () => plan);
    const outputChars = plans.reduce((sum, p) => sum + p.content.length + (p.toolCalls?.reduce((n, c) => n + c.function.arguments.length + c.function.name.length, 0) ?? 0), 0);
    const usage = usageFor(estimateTokens(promptChars), estimateTokens(outputChars));
    if (body.stream !== true) {
      sendJson(res, 200, completionObject(identity, plans, usage));
      return;
    }
    const chunks = streamChunks(identity, plans, body.stream_options?.include_usage === true ? usage : null);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    if (chunkGapMs <= 0) {
      res.end(chunks.map(sseFrame).join('') + SSE_DONE);
      return;
    }
    for (const [index, chunk] of chunks.entries()) {
      if (index > 0 && !(await delayUnlessGone(chunkGapMs, res))) return;
      res.write(sseFrame(chunk));
    }
    res.end(SSE_DONE);
  }

  private onHandlerError(error: unknown, res: ServerResponse): void {
    if (isGone(res)) {
      this.deps.logger.debug({ err: error, target: this.name }, 'chat completion aborted: client gone');
      return;
    }
    this.deps.logger.error({ err: error, target: this.name }, 'chat completion handler failed');
    if (res.headersSent) res.destroy();
    else sendJson(res, 500, internalError(error instanceof Error ? error.message : String(error)));
  }
}
