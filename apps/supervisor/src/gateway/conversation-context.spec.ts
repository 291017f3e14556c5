import type { ChatMessage } from '@switchyard/router';
import { combineWithHistory, historyBudgetTokens, nextHistory, trimHistory } from './conversation-context';

const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });
const system = (content: string): ChatMessage => ({ role: 'system', content });
/** One token per character: the arithmetic stays readable. */
const chars = (message: ChatMessage) => message.content.length;

describe('combineWithHistory', () => {
  const history = [user('my name is Wei'), assistant('Nice to meet you, Wei.')];

  it('puts the stored history after the client system messages and before its new turn', () => {
    const { messages, prepended } = combineWithHistory([system('be brief'), user('what is my name?')], history);
    expect(messages).toEqual([system('be brief'), ...history, user('what is my name?')]);
    expect(prepended).toBe(2);
  });

  it('leaves a client that sends the whole thread alone: nothing is duplicated', () => {
    const thread = [system('be brief'), ...history, user('what is my name?')];
    expect(combineWithHistory(thread, history)).toEqual({ messages: thread, prepended: 0 });
  });

  it('passes the first turn of a session through', () => {
    expect(combineWithHistory([user('hi')], [])).toEqual({ messages: [user('hi')], prepended: 0 });
  });
});

describe('trimHistory', () => {
  const history = [user('aaaa'), assistant('bbbb'), user('cc'), assistant('dd')];

  it('keeps the newest whole messages within the budget', () => {
    expect(trimHistory(history, 100, chars)).toEqual(history);
    expect(trimHistory(history, 4, chars)).toEqual([user('cc'), assistant('dd')]);
    expect(trimHistory(history, 0, chars)).toEqual([]);
  });

  it('never starts with an answer whose question was cut', () => {
    // 'bbbb' + 'cc' + 'dd' fit in 8, but the kept part would start with an assistant message.
    expect(trimHistory(history, 8, chars)).toEqual([user('cc'), assistant('dd')]);
  });
});

describe('historyBudgetTokens', () => {
  it('is the configured cap, or what fits beside the request in the smallest window that may serve it', () => {
    const windows = [{ context_window: 32_768 }, { context_window: 128_000 }];
    expect(historyBudgetTokens(12_000, windows, 0.8, 500)).toBe(12_000);
    expect(historyBudgetTokens(12_000, [{ context_window: 8_192 }], 0.8, 500)).toBe(Math.floor(8_192 * 0.8) - 500);
    expect(historyBudgetTokens(12_000, [{ context_window: 1_000 }], 0.8, 900)).toBe(0);
  });
});

describe('nextHistory', () => {
  it('stores what was sent without system messages, plus the answer', () => {
    expect(nextHistory([system('s'), user('q1'), assistant('a1'), user('q2')], assistant('a2'), 10)).toEqual([user('q1'), assistant('a1'), user('q2'), assistant('a2')]);
  });

  it('keeps at most the newest messages, starting at a user turn', () => {
    expect(nextHistory([user('q1'), assistant('a1'), user('q2')], assistant('a2'), 3)).toEqual([user('q2'), assistant('a2')]);
  });
});
