import type { Logger } from '@switchyard/observability';
import { withDeadline } from '@switchyard/platform';
import { estimateTokens, type ChatMessage, type Router } from '@switchyard/router';
import type { ParsedChatRequest } from './chat-completion.schema';
import { combineWithHistory, historyBudgetTokens, nextHistory, trimHistory, type ConversationRecord } from './conversation-context';
import type { ConversationStore } from './conversation.store';
import type { StoredAnswer } from './gateway-response.store';

/** A turn of a conversation with `metadata.session_id`: the request as it goes upstream (history combined in). */
export interface SessionTurn {
  sessionId: string;
  lastTarget: string | undefined;
  /** Stored messages put before the client's, and their tokens. */
  historyMessages: number;
  historyTokens: number;
  request: ParsedChatRequest;
}

/** The history store did not answer: the call is refused rather than answered without its thread. */
export class SessionUnavailableError extends Error {
  constructor(options: { cause: unknown }) {
    super('the conversation history store did not answer', options);
    this.name = 'SessionUnavailableError';
  }
}

/**
 * The gateway's conversation context (seed 004 §4.4): before a turn, the session's stored
 * history is combined with the client's messages (`combineWithHistory`), cut to what every
 * target that may serve the request can hold; after it, the thread and the answer are stored,
 * and a turn answered by another model than the previous one is logged with the history size.
 */
export class ConversationSessions {
  constructor(
    private readonly store: ConversationStore,
    private readonly router: Router,
    private readonly logger: Logger,
    private readonly redisDeadlineMs: number,
  ) {}

  /** Undefined for a request without `session_id`. Throws `SessionUnavailableError` when Redis does not answer in time. */
  async begin(request: ParsedChatRequest, tenant: string): Promise<SessionTurn | undefined> {
    const sessionId = request.sessionId;
    if (sessionId === undefined) return undefined;
    let stored: ConversationRecord | undefined;
    try {
      stored = await withDeadline(this.store.load(tenant, sessionId), this.redisDeadlineMs, 'reading the session history');
    } catch (error) {
      this.logger.warn({ err: error, tenant_id: tenant }, 'session history unavailable; call refused');
      throw new SessionUnavailableError({ cause: error });
    }
    const compiled = this.router.config;
    const serving = compiled.targets.filter((target) => request.meta.sensitivity !== 'sensitive' || target.type === 'local');
    const budget = historyBudgetTokens(compiled.config.conversation.max_history_tokens, serving, compiled.config.context_max_share, estimateTokens(request.messages));
    const history = trimHistory(stored?.messages ?? [], budget, (message) => estimateTokens([message]));
    const { messages, prepended } = combineWithHistory(request.messages, history);
    // The client's own estimate covered its messages only; the router counts the combined thread.
    const meta = prepended > 0 ? { ...request.meta, estimated_input_tokens: undefined } : request.meta;
    return {
      sessionId,
      lastTarget: stored?.lastTarget,
      historyMessages: prepended,
      historyTokens: prepended > 0 ? estimateTokens(history) : 0,
      request: { ...request, messages, meta },
    };
  }

  /** After an answer: the session's history becomes the thread that was sent plus the answer. A failure to store it is logged: the answer is paid for. */
  async end(tenant: string, turn: SessionTurn, answer: StoredAnswer): Promise<void> {
    const settings = this.router.config.config.conversation;
    const toolCalls = answer.choices?.[0]?.toolCalls;
    const reply: ChatMessage = { role: 'assistant', content: answer.content, ...(toolCalls ? { tool_calls: toolCalls } : {}) };
    const messages = nextHistory(turn.request.messages, reply, settings.max_stored_messages);
    if (turn.lastTarget !== undefined && turn.lastTarget !== answer.target) {
      this.logger.info(
        {
          tenant_id: tenant,
          session: this.store.logId(turn.sessionId),
          from_target: turn.lastTarget,
          to_target: answer.target,
          history_messages: turn.historyMessages,
          history_tokens: turn.historyTokens,
        },
        'conversation switched model; its history went with it',
      );
    }
    try {
      await withDeadline(this.store.save(tenant, turn.sessionId, { messages, lastTarget: answer.target }, settings.ttl_s), this.redisDeadlineMs, 'storing the session history');
    } catch (error) {
      this.logger.warn({ err: error, tenant_id: tenant }, 'could not store the session history; the next turn sees the history before this one');
    }
  }
}
