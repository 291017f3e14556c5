import type { TargetConfig } from '../config/router-config.schema';
import type { ChatProvider } from './chat-provider';
import { OpenAiChatProvider } from './openai-chat.provider';
import { connectionFor, type UpstreamFetchOptions } from './upstream-fetch';

export type ProviderFactory = (target: TargetConfig, apiKey: string) => ChatProvider;

/** OpenAI-compatible HTTP for every target, through `connection` (an egress proxy) where `connectionFor` allows. */
export function openAiProviders(connection: UpstreamFetchOptions = {}): ProviderFactory {
  return (target, apiKey) => new OpenAiChatProvider(target, apiKey, connectionFor(target, connection));
}

export const openAiProviderFactory: ProviderFactory = openAiProviders();

/**
 * One provider (and so one SDK client with its connection pool) per target. A changed
 * endpoint, model, timeout, type or key (config reload, key rotation) builds a fresh one.
 */
export class ProviderRegistry {
  private readonly entries = new Map<string, { provider: ChatProvider; target: TargetConfig; apiKey: string }>();

  constructor(private readonly factory: ProviderFactory = openAiProviderFactory) {}

  get(target: TargetConfig, apiKey: string): ChatProvider {
    const entry = this.entries.get(target.name);
    if (entry !== undefined && entry.apiKey === apiKey && sameConnection(entry.target, target)) return entry.provider;
    const provider = this.factory(target, apiKey);
    this.entries.set(target.name, { provider, target, apiKey });
    // Calls still running on the old one finish on its connections; then they close.
    if (entry !== undefined) void entry.provider.close?.().catch(() => undefined);
    return provider;
  }

  async closeAll(): Promise<void> {
    const providers = [...this.entries.values()].map((entry) => entry.provider);
    this.entries.clear();
    await Promise.allSettled(providers.map((provider) => provider.close?.()));
  }
}

function sameConnection(a: TargetConfig, b: TargetConfig): boolean {
  // The type too: it decides whether the target is reached through the egress proxy.
  return a === b || (a.endpoint === b.endpoint && a.model === b.model && a.timeout_ms === b.timeout_ms && a.type === b.type);
}
