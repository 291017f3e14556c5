import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { AppConfig } from '@switchyard/config';
import { APP_CONFIG, REDIS } from '@switchyard/platform';
import { ContextWindowExceededError, NoEligibleTargetError, RouterCallError, Router, type ChatCallResult } from '@switchyard/router';
import { ApiError } from '../http/api-error';
import { tenantRouterError } from '../http/tenant-errors';
import type { ParsedChatRequest } from './chat-completion.schema';
import { GatewayResponseStore, type StoredAnswer } from './gateway-response.store';

export interface GatewayAnswer extends StoredAnswer {
  /** Where it came from: a fresh upstream call, the response cache, or an earlier call with the same Idempotency-Key. */
  source: 'upstream' | 'cache' | 'idempotent';
}

export interface GatewayCall {
  tenant: string;
  request: ParsedChatRequest;
  idempotencyKey: string | undefined;
  /** Streams content as it arrives; called with the target before the first piece. */
  onDelta?: (text: string, target: string) => void;
  signal?: AbortSignal;
}

/**
 * The routed chat completion behind `POST /v1/chat/completions`: response cache and
 * Idempotency-Key first, then the router; router errors become the API's errors.
 */
@Injectable()
export class GatewayService {
  private readonly store: GatewayResponseStore;

  constructor(
    private readonly router: Router,
    @Inject(REDIS) redis: Redis,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.store = new GatewayResponseStore(redis, `${config.QUEUE_PREFIX}:gateway:`);
  }

  async complete(call: GatewayCall): Promise<GatewayAnswer> {
    const { tenant, request, idempotencyKey } = call;
    const cacheConfig = this.router.config.config.cache;
    // What ties an Idempotency-Key to its body; only needed when there is a key.
    const fingerprint =
      idempotencyKey === undefined
        ? ''
        : GatewayResponseStore.fingerprint([request.body.messages, request.body.temperature ?? null, request.maxTokens ?? null, request.meta, request.body.response_format ?? null]);

    if (idempotencyKey !== undefined) {
      const claim = await this.store.claim(tenant, idempotencyKey, fingerprint, cacheConfig.idempotency_ttl_s);
      if (claim.kind === 'answered') return { ...claim.answer, source: 'idempotent' };
      if (claim.kind === 'mismatch') throw ApiError.conflict('idempotency_key_reused', 'this Idempotency-Key was used with a different request body');
      if (claim.kind === 'in_progress') {
        throw ApiError.conflict('idempotency_key_in_progress', 'a request with this Idempotency-Key is still being answered; retry shortly');
      }
    }

    try {
      const ttlS = this.cacheTtl(request);
      const cacheKey =
        ttlS === undefined
          ? undefined
          : GatewayResponseStore.fingerprint([request.body.messages, request.body.temperature, request.maxTokens ?? null, request.meta.business_type ?? null]);
      if (cacheKey !== undefined) {
        const hit = await this.store.cached(tenant, cacheKey);
        if (hit !== undefined) {
          await this.remember(tenant, idempotencyKey, fingerprint, hit);
          return { ...hit, source: 'cache' };
        }
      }
      const result = await this.route(call);
      const answer: StoredAnswer = { content: result.content, model: result.model, target: result.target, usage: { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens } };
      if (cacheKey !== undefined && ttlS !== undefined) await this.store.cache(tenant, cacheKey, answer, ttlS);
      await this.remember(tenant, idempotencyKey, fingerprint, answer);
      return { ...answer, source: 'upstream' };
    } catch (error) {
      if (idempotencyKey !== undefined) await this.store.release(tenant, idempotencyKey);
      throw error;
    }
  }

  static completionId(): string {
    // randomUUID draws from a cached entropy pool: no system call per request.
    return `chatcmpl-${randomUUID().replaceAll('-', '')}`;
  }

  private async remember(tenant: string, key: string | undefined, fingerprint: string, answer: StoredAnswer): Promise<void> {
    if (key !== undefined) await this.store.complete(tenant, key, fingerprint, answer, this.router.config.config.cache.idempotency_ttl_s);
  }

  /** Seconds to cache this request's answer, or undefined: cache off, non-deterministic, or business type not listed. */
  private cacheTtl(request: ParsedChatRequest): number | undefined {
    const cache = this.router.config.config.cache;
    if (!cache.enabled || request.body.temperature !== 0) return undefined;
    const ttl = cache.ttl_s[request.meta.business_type ?? 'default'] ?? cache.ttl_s.default;
    return ttl === undefined || ttl <= 0 ? undefined : ttl;
  }

  private async route(call: GatewayCall): Promise<ChatCallResult> {
    const { request } = call;
    try {
      return await this.router.chat({
        meta: request.meta,
        messages: request.body.messages,
        ...(request.maxTokens === undefined ? {} : { maxTokens: request.maxTokens }),
        ...(request.body.temperature === undefined ? {} : { temperature: request.body.temperature }),
        jsonMode: request.body.response_format?.type === 'json_object',
        context: { tenantId: call.tenant },
        ...(call.onDelta ? { onDelta: call.onDelta } : {}),
        ...(call.signal ? { signal: call.signal } : {}),
      });
    } catch (error) {
      throw toApiError(error);
    }
  }
}

/** Router failures as the API reports them: busy (503), too large (400), upstream failed (502); details only in the log. */
export function toApiError(error: unknown): unknown {
  if (error instanceof NoEligibleTargetError) return tenantRouterError('no_eligible_target', error);
  if (error instanceof ContextWindowExceededError) return tenantRouterError('context_length_exceeded', error);
  if (error instanceof RouterCallError) {
    return tenantRouterError(error.lastErrorClass === 'bad_request' ? 'upstream_rejected_request' : 'upstream_failed', error);
  }
  return error;
}
