import type { ChatMessage, TargetConfig } from '@switchyard/router';

/** What a session keeps between turns: the thread without system messages, and who answered last. */
export interface ConversationRecord {
  messages: ChatMessage[];
  /** The target that answered the previous turn. */
  lastTarget?: string;
}

/**
 * How a request's messages and its session's stored history combine (seed 004 §4.4):
 * - a client that sends no assistant or tool message sends only the new turn: the stored
 *   history goes after its own system messages and before its new turn;
 * - a client that sends an assistant or tool message keeps the thread itself: its messages
 *   are used as they are (nothing is duplicated), and they become the stored history.
 * System messages are never stored: a client sends its system prompt with every turn.
 */
export function combineWithHistory(client: readonly ChatMessage[], history: readonly ChatMessage[]): { messages: ChatMessage[]; prepended: number } {
  const clientKeepsThread = client.some((message) => message.role === 'assistant' || message.role === 'tool');
  if (history.length === 0 || clientKeepsThread) return { messages: [...client], prepended: 0 };
  let systemEnd = 0;
  while (systemEnd < client.length && client[systemEnd]!.role === 'system') systemEnd += 1;
  return { messages: [...client.slice(0, systemEnd), ...history, ...client.slice(systemEnd)], prepended: history.length };
}

/**
 * The newest part of `history` within `budgetTokens`, whole messages only, oldest dropped
 * first. The kept part starts at a user message, so no model sees an answer without its
 * question or a tool result without the call it answers.
 */
export function trimHistory(history: readonly ChatMessage[], budgetTokens: number, tokensOf: (message: ChatMessage) => number): ChatMessage[] {
  let start = history.length;
  let used = 0;
  while (start > 0) {
    const cost = tokensOf(history[start - 1]!);
    if (used + cost > budgetTokens) break;
    used += cost;
    start -= 1;
  }
  while (start < history.length && history[start]!.role !== 'user') start += 1;
  return history.slice(start);
}

/**
 * Tokens of history a request may carry: the configured cap, and what still fits beside its
 * own messages in the smallest context window (times the guard's share) of the targets that
 * may serve it, so a switch to any of them keeps the thread without tripping the context guard.
 */
export function historyBudgetTokens(maxHistoryTokens: number, servingTargets: readonly Pick<TargetConfig, 'context_window'>[], contextMaxShare: number, requestTokens: number): number {
  const smallestWindow = Math.min(...servingTargets.map((target) => Math.floor(target.context_window * contextMaxShare)));
  return Math.max(0, Math.min(maxHistoryTokens, smallestWindow - requestTokens));
}

/** The history to store after a turn: the thread that was sent (no system messages) and the answer, the newest `maxMessages`. */
export function nextHistory(sent: readonly ChatMessage[], answer: ChatMessage, maxMessages: number): ChatMessage[] {
  const thread = [...sent.filter((message) => message.role !== 'system'), answer];
  let start = Math.max(0, thread.length - maxMessages);
  while (start < thread.length && thread[start]!.role !== 'user') start += 1;
  return thread.slice(start);
}
