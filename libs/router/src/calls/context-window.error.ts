/**
 * The request's input does not fit any target that may serve it. Not retryable: waiting
 * does not make the input smaller.
 */
import type { RouterFailure } from '@switchyard/contracts';

export class ContextWindowExceededError extends Error implements RouterFailure {
  readonly code = 'context_length_exceeded' as const;
  readonly retryable = false;

  constructor(
    readonly estimatedInputTokens: number,
    readonly windows: readonly { target: string; contextWindow: number; limit: number }[],
    maxShare: number,
  ) {
    const sizes = windows.map((w) => `${w.target} ${w.contextWindow} (limit ${w.limit})`).join(', ');
    super(
      `request too large: about ${estimatedInputTokens} input tokens, but the targets that may serve it accept at most ${Math.round(maxShare * 100)} % of their context window: ${sizes || '(none)'}`,
    );
    this.name = 'ContextWindowExceededError';
  }
}
