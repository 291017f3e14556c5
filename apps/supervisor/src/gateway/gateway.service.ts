import { randomUUID } from 'node:crypto';
import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@switchyard/config';
import type { Logger } from '@switchyard/observability';
import { APP_CONFIG, LOGGER, TenantsConfigStore, spreadFeaturePrefix, withDeadline, type RedisConnection } from '@switchyard/platform';
import {
  CallAbortedError,
  ContextWindowExceededError,
  NoEligibleTargetError,
  ReadOnlyModeError,
  RouterCallError,
  Router,
  estimateTokens,
  type ChatCallResult,
} from '@switchyard/router';
import { ApiError, RetryLaterError } from '../http/api-error';
import { REQUEST_REDIS } from '../queues/request-redis.module';
import { tenantRouterError } from '../http/tenant-errors';
import type { ParsedChatRequest } from './chat-completion.schema';
import { ConversationSessions, SessionUnavailableError, type SessionTurn } from './conversation-sessions';
import { ConversationStore } from './conversation.store';
import { GatewayResponseStore, type StoredAnswer } from './gateway-response.store';
import { gatewayRateDecision, TenantGatewayRate } from './tenant-gateway-rate';
import { QueueFullError, QueueTimeoutError, SlotWaitQueue, waitingForSlotCanHelp, type QueueTicket } from './slot-wait-queue';

export interface GatewayAnswer extends StoredAnswer {
  /** Where it came from: a fresh upstream call, the response cache, or an earlier call with the same Idempotency-Key. */
  source: 'upstream' | 'cache' | 'idempotent';
  /** Why targets were held back for this tenant (`daily_budget_spent`: cloud excluded, degraded to local). */
  degraded?: string[];
}

export interface GatewayCall {
  tenant: string;
  request: ParsedChatRequest;
  idempotencyKey: string | undefined;
  /**
   * Streams the upstream's own events (SSE text) as they arrive, from the first token on, with
   * the target. Without it the answer is assembled (a plain, non-streaming completion).
   */
  onEvents?: (sse: string, target: string, restrictedBy?: readonly string[]) => void;
  /** The client asked for `stream_options.include_usage`: the upstream's usage chunk is streamed too. */
  includeUsage?: boolean;
  /** Aborted when the client goes away: the upstream call is cancelled. */
  signal?: AbortSignal;
}

const RETRY_AFTER_S = 2;
/** nginx's status for a request whose client closed the connection; nobody reads the answer. */
const CLIENT_CLOSED_REQUEST = 499;

/**
 * The routed chat completion behind `POST /v1/chat/completions`: response cache and
 * Idempotency-Key first, then the router, waiting in line for a slot when every eligible
 * target is full; router errors become the API's errors.
 */
@Injectable()
export class GatewayService {
  private readonly store: GatewayResponseStore;
  private readonly sessions: ConversationSessions;
  private readonly queue: SlotWaitQueue;
  private readonly redisDeadlineMs: number;
  private readonly rate: TenantGatewayRate;

  constructor(
    private readonly router: Router,
    @Inject(REQUEST_REDIS) redis: RedisConnection,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly tenants: TenantsConfigStore,
  ) {
    this.store = new GatewayResponseStore(redis, spreadFeaturePrefix(config.QUEUE_PREFIX, 'gateway'));
    // One key per tenant and minute (single-key commands): spread over the Cluster.
    this.rate = new TenantGatewayRate(redis, spreadFeaturePrefix(config.QUEUE_PREFIX, 'gateway-rate'));
    this.redisDeadlineMs = config.REDIS_REQUEST_TIMEOUT_MS;
    this.sessions = new ConversationSessions(new ConversationStore(redis, spreadFeaturePrefix(config.QUEUE_PREFIX, 'conversation')), router, logger, this.redisDeadlineMs);
    this.queue = new SlotWaitQueue(() => {
      const gateway = this.router.config.config.gateway;
      return { capacity: gateway.queue_capacity, timeoutMs: gateway.queue_timeout_ms };
    });
  }

  async complete(call: GatewayCall): Promise<GatewayAnswer> {
    const { tenant, request, idempotencyKey } = call;
    await this.admitTenantRate(tenant);
    if (idempotencyKey === undefined) return this.answer(call, undefined);
    // What ties an Idempotency-Key to its body.
    const fingerprint = GatewayResponseStore.fingerprint([
      request.messages,
      request.body.temperature ?? null,
      request.maxTokens ?? null,
      request.meta,
      request.responseFormat ?? null,
      request.upstreamParams,
    ]);
    const leaseMs = this.claimLeaseMs(request);
    const claim = await this.idempotencyRecord(() => this.store.claim(tenant, idempotencyKey, fingerprint, leaseMs));
    if (claim.kind === 'answered') return { ...claim.answer, source: 'idempotent' };
    if (claim.kind === 'mismatch') throw ApiError.conflict('idempotency_key_reused', 'this Idempotency-Key was used with a different request body');
    if (claim.kind === 'in_progress') {
      throw ApiError.conflict('idempotency_key_in_progress', 'a request with this Idempotency-Key is still being answered; retry shortly');
    }
    // The claim lives as long as this call does: renewed while it runs, so a crash frees the key within a lease.
    const renewal = setInterval(() => {
      this.store.renew(tenant, idempotencyKey, claim.owner, leaseMs).catch((error: unknown) => {
        this.logger.warn({ err: error, tenant_id: tenant }, 'could not renew an Idempotency-Key claim; it lapses unless a later renewal lands');
      });
    }, Math.max(100, Math.floor(leaseMs / 3)));
    renewal.unref();
    try {
      return await this.answer(call, { key: idempotencyKey, fingerprint });
    } catch (error) {
      await this.store.release(tenant, idempotencyKey, claim.owner).catch((releaseError: unknown) => {
        this.logger.warn({ err: releaseError, tenant_id: tenant }, 'could not release an Idempotency-Key claim; it lapses with its lease');
      });
      throw error;
    } finally {
      clearInterval(renewal);
    }
  }

  static completionId(): string {
    // randomUUID draws from a cached entropy pool: no system call per request.
    return `chatcmpl-${randomUUID().replaceAll('-', '')}`;
  }

  private async answer(received: GatewayCall, idempotency: { key: string; fingerprint: string } | undefined): Promise<GatewayAnswer> {
    const { tenant } = received;
    const session = await this.beginTurn(received.request, tenant);
    const call = session === undefined ? received : { ...received, request: session.request };
    const { request } = call;
    const ttlS = this.cacheTtl(request);
    const cacheKey =
      ttlS === undefined
        ? undefined
        : GatewayResponseStore.fingerprint([
            request.messages,
            request.body.temperature,
            request.maxTokens ?? null,
            request.meta.business_type ?? null,
            // Tools, stop, seed and the format change the answer as much as the prompt does.
            request.responseFormat ?? null,
            request.upstreamParams,
          ]);
    if (cacheKey !== undefined) {
      const hit = await this.optional('read the response cache', () => this.store.cached(tenant, cacheKey));
      if (hit !== undefined) {
        await this.remember(tenant, idempotency, hit);
        if (session !== undefined) await this.sessions.end(tenant, session, hit);
        return { ...hit, source: 'cache' };
      }
    }
    // The answer is assembled when it is stored or answered as one JSON body; a stream alone is only handed on.
    const result = await this.route(call, cacheKey !== undefined || idempotency !== undefined || call.onEvents === undefined);
    const plainText = result.choices.length === 1 && result.toolCalls === undefined;
    const answer: StoredAnswer = {
      content: result.content,
      model: result.model,
      target: result.target,
      usage: { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens },
      finishReason: result.finishReason,
      ...(plainText ? {} : { choices: result.choices }),
    };
    if (cacheKey !== undefined && ttlS !== undefined) await this.optional('write the response cache', () => this.store.cache(tenant, cacheKey, answer, ttlS));
    await this.remember(tenant, idempotency, answer);
    if (session !== undefined) await this.sessions.end(tenant, session, answer);
    return { ...answer, source: 'upstream', ...(result.restrictedBy ? { degraded: result.restrictedBy } : {}) };
  }

  /** A conversation's turn (`metadata.session_id`), its history combined in; without Redis the call is refused, not answered without its thread. */
  private async beginTurn(request: ParsedChatRequest, tenant: string): Promise<SessionTurn | undefined> {
    try {
      return await this.sessions.begin(request, tenant);
    } catch (error) {
      if (!(error instanceof SessionUnavailableError)) throw error;
      throw new RetryLaterError('session_unavailable', 'the conversation history store is unavailable right now; nothing was run, retry later', RETRY_AFTER_S);
    }
  }

  /**
   * SPEC §6 `gateway_rpm`: counted fleet-wide in Redis per UTC minute; past it a 429 with
   * Retry-After. When Redis does not answer in time the call goes on (logged): the limit is a
   * fairness guard, the upstream limits still hold.
   */
  private async admitTenantRate(tenant: string): Promise<void> {
    const limit = this.tenants.limitsOf(tenant).gateway_rpm;
    if (limit === null) return;
    const now = Date.now();
    const count = await this.optional('count the tenant gateway rate', () => this.rate.count(tenant, now));
    if (count === undefined) return;
    const decision = gatewayRateDecision(count, limit, now);
    if (!decision.allowed) {
      throw new RetryLaterError('rate_limit_exceeded', `at most ${limit} gateway requests a minute for this tenant; retry later`, decision.retryAfterS, HttpStatus.TOO_MANY_REQUESTS);
    }
  }

  /** The answer is paid for: a failure to store it must not cost the client the answer (its claim lapses with the lease). */
  private async remember(tenant: string, idempotency: { key: string; fingerprint: string } | undefined, answer: StoredAnswer): Promise<void> {
    if (idempotency === undefined) return;
    const ttlS = this.router.config.config.cache.idempotency_ttl_s;
    await this.optional('store an Idempotency-Key answer', () => this.store.complete(tenant, idempotency.key, idempotency.fingerprint, answer, ttlS));
  }

  /** A Redis step the call can do without (the cache, storing an answer): bounded, and skipped with a warning when Redis is away. */
  private async optional<T>(what: string, step: () => Promise<T>): Promise<T | undefined> {
    try {
      return await withDeadline(step(), this.redisDeadlineMs, what);
    } catch (error) {
      this.logger.warn({ err: error }, `could not ${what}; going on without it`);
      return undefined;
    }
  }

  /** The Idempotency-Key record is the promise a retry is free: without Redis the call is refused, not run unguarded. */
  private async idempotencyRecord<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await withDeadline(step(), this.redisDeadlineMs, 'reading the Idempotency-Key record');
    } catch (error) {
      this.logger.warn({ err: error }, 'Idempotency-Key store unavailable; call refused');
      throw new RetryLaterError('idempotency_unavailable', 'the Idempotency-Key store is unavailable right now; nothing was run, retry later with the same key', RETRY_AFTER_S);
    }
  }

  /** About the call's own timeout: its `timeout_ms`, else the longest target timeout. */
  private claimLeaseMs(request: ParsedChatRequest): number {
    const timeouts = this.router.config.config.timeouts;
    return Math.max(1_000, request.meta.timeout_ms ?? Math.max(timeouts.local_ms, timeouts.cloud_ms));
  }

  /** Seconds to cache this request's answer, or undefined: cache off, non-deterministic, or business type not listed. */
  private cacheTtl(request: ParsedChatRequest): number | undefined {
    const cache = this.router.config.config.cache;
    if (!cache.enabled || request.body.temperature !== 0) return undefined;
    const ttl = cache.ttl_s[request.meta.business_type ?? 'default'] ?? cache.ttl_s.default;
    return ttl === undefined || ttl <= 0 ? undefined : ttl;
  }

  /**
   * The router call, in line for a slot when every eligible target is full: while others
   * wait, a new call queues behind them; a call that ends frees its slot for the first in line.
   */
  private async route(call: GatewayCall, assemble: boolean): Promise<ChatCallResult> {
    const { request, signal } = call;
    // Estimated once, not again on every try from the queue.
    const meta = request.meta.estimated_input_tokens === undefined ? { ...request.meta, estimated_input_tokens: estimateTokens(request.messages) } : request.meta;
    let ticket: QueueTicket | undefined;
    try {
      if (this.queue.inLine > 0) {
        ticket = this.queue.admit();
        await this.queue.wait(ticket, signal);
      }
      for (;;) {
        try {
          const result = await this.router.chat({
            meta,
            messages: request.messages,
            ...(request.maxTokens === undefined ? {} : { maxTokens: request.maxTokens }),
            ...(request.body.temperature === undefined ? {} : { temperature: request.body.temperature }),
            ...(request.responseFormat === undefined ? {} : { responseFormat: request.responseFormat }),
            upstreamParams: request.upstreamParams,
            context: { tenantId: call.tenant, ...stickyKeyOf(call) },
            passThrough: { includeUsage: call.includeUsage === true, assemble, ...(call.onEvents ? { onEvents: call.onEvents } : {}) },
            ...(signal ? { signal } : {}),
          });
          this.queue.slotFreed();
          return result;
        } catch (error) {
          if (!(error instanceof NoEligibleTargetError)) {
            if (!(error instanceof ContextWindowExceededError)) this.queue.slotFreed();
            throw error;
          }
          // Woken but no slot for this call: the next one in line may fit where it does not.
          if (ticket !== undefined) this.queue.passOn(ticket);
          if (!waitingForSlotCanHelp(error.explanation)) throw error;
          ticket ??= this.queue.admit();
          await this.queue.wait(ticket, signal);
        }
      }
    } catch (error) {
      if (signal?.aborted && !(error instanceof CallAbortedError)) throw toApiError(new CallAbortedError([], { cause: error }));
      throw toApiError(error);
    } finally {
      if (ticket !== undefined) this.queue.leave(ticket);
    }
  }
}

/** OpenAI's `user` (the caller's end user) keeps a weighted split on one target for that user, per tenant. */
function stickyKeyOf(call: GatewayCall): { stickyKey?: string } {
  const user = call.request.upstreamParams.user;
  return typeof user === 'string' && user.length > 0 ? { stickyKey: `${call.tenant}:${user}` } : {};
}


/** How long a client should wait before asking again in read-only mode: an operator ends it, not a timer. */
const READ_ONLY_RETRY_AFTER_S = 30;

/** Router and queue failures as the API reports them: busy or read-only (503), too large (400), upstream failed (502); details only in the log. */
export function toApiError(error: unknown): unknown {
  if (error instanceof QueueFullError || error instanceof QueueTimeoutError) {
    return new RetryLaterError('overloaded', 'busy: every model target is at capacity; retry later', RETRY_AFTER_S);
  }
  if (error instanceof ReadOnlyModeError) {
    return new RetryLaterError('read_only', 'read-only mode: model calls are switched off by an operator and there is no cached answer for this request; retry later', READ_ONLY_RETRY_AFTER_S);
  }
  if (error instanceof NoEligibleTargetError) return tenantRouterError('no_eligible_target', error);
  if (error instanceof ContextWindowExceededError) return tenantRouterError('context_length_exceeded', error);
  if (error instanceof CallAbortedError) {
    return new ApiError(CLIENT_CLOSED_REQUEST as HttpStatus, 'client_closed_request', error.message);
  }
  if (error instanceof RouterCallError) {
    return tenantRouterError(error.lastErrorClass === 'bad_request' ? 'upstream_rejected_request' : 'upstream_failed', error);
  }
  return error;
}
