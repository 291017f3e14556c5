import type { TargetConfig } from '../config/router-config.schema';
import type { TokenUsage } from '../calls/cost';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ProviderCall {
  messages: readonly ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  jsonMode?: boolean;
  headers?: Readonly<Record<string, string>>;
  /** Fires on the router's deadline or the caller's abort; the provider must stop on it. */
  signal: AbortSignal;
  timeoutMs: number;
  /** The connection to the upstream is established (the connect stage is over; the headers may come much later). */
  onConnected?: () => void;
  /** The first content token arrived. */
  onFirstToken?: () => void;
  /** Each piece of content as it streams in. */
  onDelta?: (text: string) => void;
}

export interface ProviderResult {
  content: string;
  model: string;
  /** Absent when the upstream did not report usage. */
  usage?: TokenUsage;
  /** Time from sending the request to the first content token; absent when nothing streamed. */
  firstTokenMs?: number;
}

/** One upstream target speaking some chat protocol. Throws whatever its transport throws. */
export interface ChatProvider {
  readonly target: TargetConfig;
  complete(call: ProviderCall): Promise<ProviderResult>;
  /** Releases connections once the calls in flight are done (the provider was replaced or the router closed). */
  close?(): Promise<void>;
}
