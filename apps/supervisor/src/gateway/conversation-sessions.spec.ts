import { RequestMetaSchema } from '@switchyard/contracts';
import { createLogger } from '@switchyard/observability';
import { parseRouterConfig, Router, type ChatMessage } from '@switchyard/router';
import type { ParsedChatRequest } from './chat-completion.schema';
import type { ConversationRecord } from './conversation-context';
import { ConversationSessions, SessionUnavailableError } from './conversation-sessions';
import type { ConversationStore } from './conversation.store';

const CONFIG = `
router:
  probes: { enabled: false }
  targets:
    - { name: small_local, type: local, endpoint: "http://127.0.0.1:9/v1", model: m, max_concurrency: 4, context_window: 1000, cost_per_1k_tokens: { input: 0, output: 0 } }
    - { name: big_cloud, type: cloud, endpoint: "http://127.0.0.1:9/v1", model: m, max_concurrency: 4, context_window: 128000, cost_per_1k_tokens: { input: 0, output: 0 } }
  routes:
    - { name: fallback, when: { all_else: true }, target: small_local }
conversation_context: { max_history_tokens: 100000 }
`;

const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });

/** An in-memory stand-in for the Redis store. */
function memoryStore(initial?: ConversationRecord) {
  const saved: ConversationRecord[] = [];
  let current = initial;
  const store = {
    load: async () => current,
    save: async (_tenant: string, _session: string, record: ConversationRecord) => {
      current = record;
      saved.push(record);
    },
    logId: () => 'session-hash',
  };
  return { store: store as unknown as ConversationStore, saved };
}

function request(messages: ChatMessage[], sessionId: string | null = 'conv-1', sensitivity: 'internal' | 'sensitive' = 'internal'): ParsedChatRequest {
  return {
    body: { messages: [] } as unknown as ParsedChatRequest['body'],
    messages,
    meta: RequestMetaSchema.parse({ sensitivity, estimated_input_tokens: 5 }),
    alias: undefined,
    maxTokens: undefined,
    responseFormat: undefined,
    upstreamParams: {},
    n: 1,
    ...(sessionId === null ? {} : { sessionId }),
  };
}

describe('ConversationSessions', () => {
  const router = new Router({ config: parseRouterConfig(CONFIG, 'sessions.yaml'), secrets: () => undefined, logger: createLogger('sessions-test', 'silent') });
  const lines: { fields: Record<string, unknown>; message: string }[] = [];
  const logger = createLogger('sessions-test', 'silent');
  jest.spyOn(logger, 'info').mockImplementation(((fields: Record<string, unknown>, message: string) => lines.push({ fields, message })) as never);
  const answer = (target: string, content = 'ok') => ({ content, model: 'm', target, usage: { inputTokens: 1, outputTokens: 1 } });

  afterAll(() => router.close());
  beforeEach(() => (lines.length = 0));

  it('does nothing for a request without a session', async () => {
    const { store } = memoryStore();
    expect(await new ConversationSessions(store, router, logger, 1_000).begin(request([user('hi')], null), 'acme')).toBeUndefined();
  });

  it('puts the stored turns before the new one, stores the thread with the answer, and logs a switch of model with the history size', async () => {
    const { store, saved } = memoryStore({ messages: [user('my name is Wei'), assistant('hello Wei')], lastTarget: 'small_local' });
    const sessions = new ConversationSessions(store, router, logger, 1_000);
    const turn = (await sessions.begin(request([user('what is my name?')]), 'acme'))!;
    expect(turn.request.messages).toEqual([user('my name is Wei'), assistant('hello Wei'), user('what is my name?')]);
    expect(turn.request.meta.estimated_input_tokens).toBeUndefined();
    expect(turn).toMatchObject({ historyMessages: 2, lastTarget: 'small_local' });
    expect(turn.historyTokens).toBeGreaterThan(0);

    await sessions.end('acme', turn, answer('big_cloud', 'Wei'));
    expect(saved.at(-1)).toEqual({ messages: [user('my name is Wei'), assistant('hello Wei'), user('what is my name?'), assistant('Wei')], lastTarget: 'big_cloud' });
    expect(lines).toEqual([
      {
        message: 'conversation switched model; its history went with it',
        fields: expect.objectContaining({ session: 'session-hash', from_target: 'small_local', to_target: 'big_cloud', history_messages: 2, history_tokens: turn.historyTokens }),
      },
    ]);

    const next = (await sessions.begin(request([user('thanks')]), 'acme'))!;
    await sessions.end('acme', next, answer('big_cloud'));
    expect(lines).toHaveLength(1);
  });

  it('cuts the history to what the smallest window that may serve the request holds', async () => {
    const long = 'word '.repeat(500);
    const { store } = memoryStore({ messages: [user(long), assistant(long), user('short question'), assistant('short answer')] });
    const sessions = new ConversationSessions(store, router, logger, 1_000);
    // A sensitive request may only use small_local (1,000 tokens × 0.8): the long turn is dropped.
    const sensitive = (await sessions.begin(request([user('and now?')], 'conv-1', 'sensitive'), 'acme'))!;
    expect(sensitive.request.messages).toEqual([user('short question'), assistant('short answer'), user('and now?')]);
  });

  it('refuses the turn when the store does not answer in time', async () => {
    const store = { load: () => new Promise<never>(() => undefined), save: async () => undefined, logId: () => 'x' } as unknown as ConversationStore;
    await expect(new ConversationSessions(store, router, logger, 20).begin(request([user('hi')]), 'acme')).rejects.toBeInstanceOf(SessionUnavailableError);
  });
});
